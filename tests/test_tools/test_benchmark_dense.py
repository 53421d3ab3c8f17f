"""tools/analysis_tools/benchmark_dense.py at a small size."""
import re

import pytest

from helpers.tools import load_tool, run_tool


def test_small_run_prints_every_model(tmp_path):
    proc = run_tool([
        'analysis_tools/benchmark_dense.py', '--arch', 'tiny', '--det-size', '64', '--seg-size',
        '64', '--rate', '0.5', '--runs', '1'
    ], tmp_path)
    rows = [
        line.split() for line in proc.stdout.splitlines()
        if re.match(r'(det|seg|seg-pyramid) +64x64 ', line)
    ]
    assert [(r[0], r[2]) for r in rows] == [('det', 'backbone'), ('det', 'backbone+neck'),
                                            ('seg', 'backbone'), ('seg', 'backbone+neck'),
                                            ('seg-pyramid', 'backbone+pyramid')]
    for row in rows:
        act, dense_gf, dyt_gf, flop_ratio = map(float, (row[3], row[7], row[8], row[9]))
        assert abs(act - 0.5) < 0.05  # the calibrated activation rate
        assert dyt_gf < dense_gf and flop_ratio > 1.05  # half the MLP work is skipped
    assert 'speedup/FLOP ratio' in proc.stdout


def test_pyramid_variant_adds_its_transposed_convolutions_to_both_modes():
    benchmark = load_tool('analysis_tools/benchmark_dense.py').benchmark
    (mln, _), (pyramid, ) = (benchmark(task, 'tiny', 64, 0.5, 1) for task in ('seg', 'seg-pyramid'))
    assert (mln['part'], pyramid['part']) == ('backbone', 'backbone+pyramid')
    # The same ViT, calibrated alike; the pyramid runs on every token in both modes: its
    # three C -> C 2x2 transposed convolutions (x4 level: on the g and 4g grids; x2 level:
    # on g) cost 4 C^2 (g + 4g + g) multiply-adds, C = 192 (tiny), g = 4 x 4 tokens; the
    # final LayerNorm it drops costs 5 per element of its g + 1 tokens (the counter's rule).
    c, g = 192, 16
    extra = (24 * c**2 * g - 5 * (g + 1) * c) / 1e9
    assert pyramid['act_rate'] == pytest.approx(mln['act_rate'])
    for mode in ('dense', 'DyT'):
        assert pyramid['flops'][mode] - mln['flops'][mode] == pytest.approx(extra, rel=1e-6)


def test_size_must_fit_the_patches(tmp_path):
    proc = run_tool(['analysis_tools/benchmark_dense.py', '--det-size', '100'],
                    tmp_path,
                    check=False)
    assert proc.returncode == 2
    assert '--det-size must be a multiple of the patch size 16' in proc.stderr
