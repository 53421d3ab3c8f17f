"""The commands of docs/video.md's "Speed, FLOPs and the demo" and of the video
section of docs/benchmarks.md, run as typed in a workspace holding the generated
clips and a DyT video checkpoint where the commands read it (the benchmark
shrunk to ViT-tiny at 32 px by options appended, as the guides' tests do)."""
import json

import pytest
import torch
from torch import nn

from helpers.guides import command
from helpers.tools import REPO, run_tool
from mmvitdyn.apis import init_model

VIDEO_DOC, BENCHMARKS_DOC = REPO / 'docs/video.md', REPO / 'docs/benchmarks.md'
CONFIG = 'configs/dyt_video/vit-mini-p4-dyt_d16_1xb8-20e_video-shapes-32px.py'
CHECKPOINT = 'work_dirs/vit-mini-p4-dyt_d16_1xb8-20e_video-shapes-32px/epoch_20.pth'


@pytest.fixture(scope='module')
def workspace(tmp_path_factory):
    from mmvitdyn.datasets import generate_video_shapes
    root = tmp_path_factory.mktemp('video-docs')
    generate_video_shapes(str(root / 'data/video_shapes'))
    (root / 'configs').symlink_to(REPO / 'configs')
    torch.manual_seed(0)
    model = init_model(str(REPO / CONFIG))
    for block in model.backbone.vit.dyt_blocks():  # rates between 0 and 1
        for dispatcher in block.dispatchers.values():
            nn.init.normal_(dispatcher.gate.weight, std=0.2)
    (root / CHECKPOINT).parent.mkdir(parents=True)
    torch.save({'state_dict': model.state_dict()}, root / CHECKPOINT)
    return root


def run(tokens, cwd, *appended):
    """A doc's ``python tools/...`` or ``python demo/...`` command in ``cwd``."""
    assert tokens[0] == 'python'
    script = tokens[1][len('tools/'):] if tokens[1].startswith('tools/') else '../' + tokens[1]
    return run_tool([script, *tokens[2:], *appended], cwd).stdout


def test_get_flops_counts_the_val_clips(workspace):
    tokens = command(VIDEO_DOC, f'python tools/analysis_tools/get_flops.py {CONFIG} --checkpoint')
    assert CHECKPOINT in tokens
    out = run(tokens, workspace, '--out', 'flops.json')
    figures = json.loads((workspace / 'flops.json').read_text())
    assert figures['per'] == 'clip' and figures['input_shape'] == [1, 3, 8, 32, 32]
    assert len(figures['flops_per_image']) == 24
    assert figures['flops'] < figures['dense_flops'] and 0 < figures['activation_rate'] < 1
    assert 'G per clip, mean over 24 val clips' in out


def test_the_video_demo_writes_the_skip_maps(workspace):
    tokens = command(VIDEO_DOC, 'python demo/video_demo.py')
    out = run(tokens, workspace)
    summary = json.loads((workspace / 'work_dirs/video_demo/summary.json').read_text())
    assert len(summary['frame_rates']) == 8 and len(summary['masks']) == 6
    assert (workspace / 'work_dirs/video_demo/000000_dispatch.png').is_file()
    assert f'{summary["gflops"]:.4f}' in out


def test_the_clip_benchmark_writes_its_rows(workspace):
    tokens = command(BENCHMARKS_DOC, 'python tools/analysis_tools/benchmark.py --frames 8')
    run(tokens, workspace, '--arch', 'tiny', '--img-size', '32', '--patch-size', '8', '--runs', '1',
        '--min-time', '0')
    rows = json.loads((workspace / 'work_dirs/benchmark_video.json').read_text())['rows']
    assert [(r['model'], r['frames'], r['batch_size']) for r in rows] == [('dense', 8, 1),
                                                                          ('mlp @ 0.5', 8, 1)]
    assert rows[1]['flop_ratio'] > 1.2 and rows[1]['clips_per_s']['median'] > 0
