"""The commands of docs/video.md's "Speed, FLOPs and the demo" and of the video
section of docs/benchmarks.md, run as typed in a workspace holding the generated
clips and a DyT video checkpoint where the commands read it (the benchmark
shrunk to ViT-tiny at 32 px by options appended, as the guides' tests do)."""
import json

import onnx
import pytest
import torch
from torch import nn

from helpers.guides import command
from helpers.tools import REPO, run_tool
from mmvitdyn.analysis import val_images
from mmvitdyn.apis import init_model
from mmvitdyn.deployment import OnnxRuntimeModel
from mmvitdyn.engine import load_config

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


def test_the_onnx_export_equals_the_tensor_forward(workspace, monkeypatch):
    """The export command as typed: on 3 validation clips (one view each) ONNX Runtime's
    class scores of the clips (3, 3, 8, 32, 32) equal the recogniser's own head scores of
    the views (3, 1, 3, 8, 32, 32) within 1e-4, DyT skipping some tokens; the metadata holds
    the test pipeline's 8 frames, the frame size, RGB and the config's mean and std."""
    tokens = command(VIDEO_DOC, 'python tools/deployment/pytorch2onnx.py')
    assert tokens[2:4] == [CONFIG, CHECKPOINT]
    out = run(tokens, workspace)
    monkeypatch.chdir(workspace)
    cfg = load_config(CONFIG)
    model = init_model(cfg, CHECKPOINT)
    views = next(val_images(cfg, model, 3))
    assert views.shape == (3, 1, 3, 8, 32, 32)
    with torch.no_grad():
        expected = model.extract_feat(views, stage='head')[0]
    rate = model.backbone.activation_rates()['act_rate']
    assert expected.shape == (3, 3) and 0.05 < rate < 0.95, rate
    path = workspace / tokens[4]
    torch.testing.assert_close(
        OnnxRuntimeModel(str(path))(views[:, 0]), expected, atol=1e-4, rtol=0)
    meta = {prop.key: json.loads(prop.value) for prop in onnx.load(str(path)).metadata_props}
    assert (meta['frames'], meta['input_size'], meta['channel_order']) == (8, [32, 32], 'RGB')
    assert meta['mean'] == meta['std'] == [127.5] * 3
    assert "input 'clips': float32 (batch, 3, 8, 32, 32), channels RGB" in out
    assert "output 'logits': float32 (batch, 3)" in out


def test_the_clip_benchmark_writes_its_rows(workspace):
    tokens = command(BENCHMARKS_DOC, 'python tools/analysis_tools/benchmark.py --frames 8')
    run(tokens, workspace, '--arch', 'tiny', '--img-size', '32', '--patch-size', '8', '--runs', '1',
        '--min-time', '0')
    rows = json.loads((workspace / 'work_dirs/benchmark_video.json').read_text())['rows']
    assert [(r['model'], r['frames'], r['batch_size']) for r in rows] == [('dense', 8, 1),
                                                                          ('mlp @ 0.5', 8, 1)]
    assert rows[1]['flop_ratio'] > 1.2 and rows[1]['clips_per_s']['median'] > 0
