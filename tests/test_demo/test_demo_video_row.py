"""The demo's video row (tools/demo.py, its short schedule): DyT and AdaptFormer
trained on the generated clips, evaluated, counted and timed side by side."""
import os

import pytest

from helpers.tools import REPO, load_tool


@pytest.fixture(scope='module')
def video_rows(tmp_path_factory):
    """The rows of the demo's video step, run in a workspace holding the clips (the
    repository's configs and tools linked in, as the demo runs them from the root)."""
    from mmvitdyn.datasets import generate_video_shapes
    root = tmp_path_factory.mktemp('demo-video')
    generate_video_shapes(str(root / 'data/video_shapes'))
    for folder in ('configs', 'tools'):
        (root / folder).symlink_to(REPO / folder)
    demo = load_tool('demo.py')
    patch = pytest.MonkeyPatch()
    patch.setattr(demo, 'REPO', str(root))
    patch.setenv('PYTHONPATH',
                 os.pathsep.join(filter(None, [str(REPO), os.environ.get('PYTHONPATH')])))
    try:
        rows = demo.video_rows(demo.Demo(str(root / 'work_dirs/demo')), demo.SCHEDULES['short'][4])
    finally:
        patch.undo()
    return rows, demo


def dense_clip_flops() -> int:
    """Multiply-adds of the AdaptFormer clip by hand: 8 frames of 64 patches and the
    class token through the 6-layer, 192-wide ViT (MLP 768, adapters d=16), then the
    pooling over all 520 tokens and the 3-way head (fvcore: a LayerNorm costs 5 per
    element, attention counts q k^T and weights v)."""
    c, f, n, frames, d, layers = 192, 768, 65, 8, 16, 6
    block = (2 * 5 * n * c + n * c * 3 * c + n * n * 2 * c + n * c * c + 2 * n * c * f +
             2 * n * c * d)
    frame = 64 * 4 * 4 * 3 * c + layers * block + 5 * n * c  # patch embedding, final norm
    m = frames * n
    pooling = 5 * c * (1 + 2 * m) + c * c * (2 + 2 * m) + 2 * m * c + c * 3
    return frames * frame + pooling


def test_dyt_learns_the_clips_at_about_half_the_tokens(video_rows):
    rows, demo = video_rows
    adaptformer, dyt = rows
    assert [r['label'] for r in rows] == [label for label, _, _ in demo.VIDEO_RUNS]
    assert dyt['top1'] > 0.5 and adaptformer['top1'] > 0.5  # 3 classes: chance is 1/3
    assert adaptformer['act_rate'] is None and 0.3 < dyt['act_rate'] < 0.8
    assert adaptformer['gflops'] * 1e9 == pytest.approx(dense_clip_flops(), rel=1e-9)
    # DyT's MLPs (two thirds of a block) run about act_rate of the patches.
    assert dyt['gflops'] < adaptformer['gflops'] * (1 - 0.5 * (1 - dyt['act_rate']))
    assert adaptformer['speedup'] == 1.0 and dyt['clips_per_s'] > 0


def test_the_summary_prints_the_rows_side_by_side(video_rows):
    rows, demo = video_rows
    table = demo.video_table(rows).splitlines()
    assert table[0].split()[-6:] == ['top-1', 'act.', 'rate', 'GFLOPs/clip', 'clips/s', 'speed-up']
    for line, row in zip(table[1:], rows):
        assert line.startswith(row['label'])
        assert f'{100 * row["top1"]:.2f}' in line and f'{row["gflops"]:.4f}' in line
