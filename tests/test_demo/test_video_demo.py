"""demo/video_demo.py on a generated .mp4: the per-frame masks it writes are the
model's on the clip's frames, decoded and normalised here without mmaction2's
pipeline."""
import json

import decord
import numpy as np
import pytest
import torch
from torch import nn

from helpers.configs import DYT_DIGITS_CFG, DYT_VIDEO_CFG
from helpers.tools import run_tool
from mmvitdyn.apis import init_model

PNG = b'\x89PNG\r\n\x1a\n'


@pytest.fixture(scope='module')
def clip_and_model(tmp_path_factory):
    """A generated clip (8 frames of 32 x 32 px), and a random DyT video model whose
    gates differ from token to token, saved as a checkpoint."""
    from mmvitdyn.datasets import generate_video_shapes
    root = tmp_path_factory.mktemp('video-demo')
    generate_video_shapes(str(root / 'data/video_shapes'))
    torch.manual_seed(0)
    model = init_model(str(DYT_VIDEO_CFG))
    for block in model.backbone.vit.dyt_blocks():
        for dispatcher in block.dispatchers.values():
            nn.init.normal_(dispatcher.gate.weight, std=0.2)
    checkpoint = root / 'dyt-video.pth'
    torch.save({'state_dict': model.state_dict()}, checkpoint)
    return root, root / 'data/video_shapes/videos/val/000001.mp4', checkpoint, model


def test_the_masks_written_are_the_model_s_on_each_frame(clip_and_model, tmp_path):
    root, clip, checkpoint, model = clip_and_model
    out_dir = tmp_path / 'out'
    out = run_tool(['../demo/video_demo.py', clip, DYT_VIDEO_CFG, checkpoint, '--out-dir', out_dir],
                   root).stdout
    summary = json.loads((out_dir / 'summary.json').read_text())
    # The 8 frames as decord decodes them, normalised as the config says (mean = std = 127.5).
    frames = torch.from_numpy(decord.VideoReader(str(clip)).get_batch(range(8)).asnumpy())
    clips = ((frames.float() - 127.5) / 127.5).permute(3, 0, 1, 2)[None]  # (1, 3, 8, 32, 32)
    with torch.no_grad():
        logits = model.cls_head(model.backbone(clips))
    masks = model.backbone.dispatch_masks()
    assert len(summary['masks']) == 6 and summary['input_shape'] == [1, 3, 8, 32, 32]
    for written, block in zip(summary['masks'], masks):
        assert written == {'mlp': (block['mlp'] != 0).int().tolist()}
    rates = torch.stack([(b['mlp'] != 0).float().mean(1) for b in masks]).mean(0)
    assert summary['frame_rates'] == pytest.approx(rates.tolist())
    assert len(set(np.round(summary['frame_rates'], 4))) > 1  # frames differ
    assert 0.1 < summary['activation_rate'] < 0.9
    assert summary['prediction'] == int(logits.argmax())
    assert summary['score'] == pytest.approx(float(logits.max()), abs=1e-5)
    assert (out_dir / '000001_dispatch.png').read_bytes().startswith(PNG)
    assert f'{summary["activation_rate"]:.4f}' in out and f'{summary["gflops"]:.4f}' in out


def test_an_image_config_is_refused(clip_and_model, tmp_path):
    root, clip, checkpoint, _ = clip_and_model
    image_config = DYT_DIGITS_CFG
    proc = run_tool(['../demo/video_demo.py', clip, image_config, checkpoint], root, check=False)
    assert proc.returncode == 2
    assert "default_scope='mmpretrain'; a video model's config has 'mmaction'" in proc.stderr


def test_an_out_dir_in_the_data_set_s_folder_is_refused(clip_and_model):
    """The config's data set scans data/video_shapes: pictures written there would be
    read as data."""
    root, clip, checkpoint, _ = clip_and_model
    out_dir = 'data/video_shapes/videos/val'
    before = sorted(p.name for p in (root / out_dir).iterdir())
    proc = run_tool(
        ['../demo/video_demo.py', clip, DYT_VIDEO_CFG, checkpoint, '--out-dir', out_dir],
        root,
        check=False)
    assert proc.returncode == 2
    assert f'output {out_dir}/000001_dispatch.png lies in the input folder' in proc.stderr
    assert sorted(p.name for p in (root / out_dir).iterdir()) == before
