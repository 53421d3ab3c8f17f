"""tools/analysis_tools/benchmark_dense.py at a small size."""
import re

from helpers.tools import run_tool


def test_small_run_prints_both_tasks(tmp_path):
    proc = run_tool([
        'analysis_tools/benchmark_dense.py', '--arch', 'tiny', '--det-size', '64', '--seg-size',
        '64', '--rate', '0.5', '--runs', '1'
    ], tmp_path)
    rows = [
        line.split() for line in proc.stdout.splitlines() if re.match(r'(det|seg) +64x64 ', line)
    ]
    assert [(r[0], r[2]) for r in rows] == [('det', 'backbone'), ('det', 'backbone+neck'),
                                            ('seg', 'backbone'), ('seg', 'backbone+neck')]
    for row in rows:
        act, dense_gf, dyt_gf, flop_ratio = map(float, (row[3], row[7], row[8], row[9]))
        assert abs(act - 0.5) < 0.05  # the calibrated activation rate
        assert dyt_gf < dense_gf and flop_ratio > 1.05  # half the MLP work is skipped
    assert 'speedup/FLOP ratio' in proc.stdout


def test_size_must_fit_the_patches(tmp_path):
    proc = run_tool(['analysis_tools/benchmark_dense.py', '--det-size', '100'],
                    tmp_path,
                    check=False)
    assert proc.returncode == 2
    assert '--det-size must be a multiple of the patch size 16' in proc.stderr
