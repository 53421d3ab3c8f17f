"""The skip map's panels on a decoded frame of the video-shapes data (a red circle):
skipped patches hatched dark grey, computed here by hand, active patches the frame."""
import decord
import numpy as np
import pytest
import torch

from mmvitdyn.datasets.generators.video_shapes import draw_frame, write_clip
from mmvitdyn.visualization.dispatch_maps import SkipView, plot_skip_map


def hatched_grey(frame: torch.Tensor, active: torch.Tensor, patch: int) -> torch.Tensor:
    """``frame`` (H, W, 3) with each skipped patch's pixels at 45% of their BT.601 luma,
    200 on the diagonals (y + x) % 6 == 0, patch by patch."""
    expected = frame.clone()
    for r, c in (active == 0).nonzero().tolist():
        rows = slice(r * patch, min((r + 1) * patch, frame.shape[0]))
        cols = slice(c * patch, min((c + 1) * patch, frame.shape[1]))
        pixels = frame[rows, cols].long()
        grey = (299 * pixels[..., 0] + 587 * pixels[..., 1] + 114 * pixels[..., 2]) * 45 // 100000
        y = torch.arange(rows.start, rows.stop)[:, None]
        x = torch.arange(cols.start, cols.stop)[None]
        grey = torch.where((y + x) % 6 == 0, torch.tensor(200), grey)
        expected[rows, cols] = grey[..., None].to(torch.uint8)
    return expected


@pytest.fixture(scope='module')
def red_frame(tmp_path_factory):
    """Frame 0 of a 32 x 32 px clip of the video-shapes data, circle (red) on every frame,
    as decord decodes it (RGB)."""
    rng = np.random.default_rng(3)
    path = tmp_path_factory.mktemp('clip') / 'red.mp4'
    write_clip(path, np.stack([draw_frame(rng, 32, 0) for _ in range(2)]), fps=4)
    return torch.from_numpy(decord.VideoReader(str(path))[0].asnumpy())


@pytest.mark.parametrize('size', [32, 30])  # 30: the 8 x 8 grid of 4 px runs past the frame
def test_skipped_patches_are_hatched_grey_and_active_ones_the_frame(red_frame, size, tmp_path):
    frame = red_frame[:size, :size].contiguous()
    active = (torch.arange(64) % 3 != 0).float()  # 0: skipped
    view = SkipView(frame.numpy(), [dict(mlp=active), dict(mlp=torch.ones(64))], (8, 8))
    fig = plot_skip_map([view], 4, 'red', str(tmp_path / 'map.png'))
    panels = [[np.asarray(image.get_array()) for image in ax.images] for ax in fig.axes]
    assert len(panels) == 3 and all(len(images) == 1 for images in panels)
    drawn, all_active = (torch.from_numpy(images[0]) for images in panels[1:])
    assert torch.equal(drawn, hatched_grey(frame, active.reshape(8, 8), 4))
    assert torch.equal(all_active, frame) and torch.equal(torch.from_numpy(panels[0][0]), frame)
    # The circle is there, and its skipped pixels are no longer red.
    red = (frame[..., 0].int() - frame[..., 1].int() > 100)
    skipped = torch.kron((active.reshape(8, 8) == 0).int(), torch.ones(4, 4, dtype=torch.int))
    skipped = skipped[:size, :size].bool()
    assert (red & skipped).sum() > 20 and (red & ~skipped).sum() > 20
    assert (drawn[red & skipped].max(1).values == drawn[red & skipped].min(1).values).all()
