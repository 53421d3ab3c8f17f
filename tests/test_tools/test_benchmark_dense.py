"""tools/analysis_tools/benchmark_dense.py at a small size, in-process."""
import json

import pytest
import torch

from helpers.tools import load_tool


def test_small_run_rows_of_every_model(tmp_path):
    threads = torch.get_num_threads()
    try:
        load_tool('analysis_tools/benchmark_dense.py').main([
            '--arch', 'tiny', '--det-size', '64', '--seg-size', '64', '--rate', '0.5', '--runs',
            '1', '--batch-sizes', '2', '--threads', '1', '--device', 'cpu', '--json',
            str(tmp_path / 'rows.json')
        ])
    finally:
        torch.set_num_threads(threads)  # main() sets the process's threads
    rows = json.loads((tmp_path / 'rows.json').read_text())['rows']
    assert [(r['task'], r['part'], r['model']) for r in rows] == [
        (task, part, model)
        for task, part in [('det', 'backbone'), ('det', 'backbone+neck'), (
            'seg', 'backbone'), ('seg', 'backbone+neck'), ('seg-pyramid', 'backbone+pyramid')]
        for model in ('dense', 'DyT')
    ]
    assert {(r['input_size'], r['batch_size'], r['dtype']) for r in rows} == {(64, 2, 'fp32')}
    for dense, dyt in zip(rows[::2], rows[1::2]):
        assert abs(dyt['act_rate'] - 0.5) < 0.05  # the calibrated activation rate
        # half the MLP work is skipped
        assert dyt['gflops'] < dense['gflops'] and dyt['flop_ratio'] > 1.05
        assert dyt['flop_ratio'] == dense['gflops'] / dyt['gflops']
        assert isinstance(dyt['meets_target'], bool) and 'meets_target' not in dense

    # FLOPs per image. The pyramid variant adds its transposed convolutions to both modes:
    # the same ViT, calibrated alike; the pyramid runs on every token in both modes: its
    # three C -> C 2x2 transposed convolutions (x4 level: on the g and 4g grids; x2 level:
    # on g) cost 4 C^2 (g + 4g + g) multiply-adds, C = 192 (tiny), g = 4 x 4 tokens; the
    # final LayerNorm it drops costs 5 per element of its g + 1 tokens (the counter's rule).
    mln = {r['model']: r for r in rows if (r['task'], r['part']) == ('seg', 'backbone')}
    pyramid = {r['model']: r for r in rows if r['task'] == 'seg-pyramid'}
    c, g = 192, 16
    extra = (24 * c**2 * g - 5 * (g + 1) * c) / 1e9
    assert pyramid['DyT']['act_rate'] == pytest.approx(mln['DyT']['act_rate'])
    for mode in ('dense', 'DyT'):
        assert pyramid[mode]['gflops'] - mln[mode]['gflops'] == pytest.approx(extra, rel=1e-6)


def test_size_must_fit_the_patches(capsys):
    with pytest.raises(SystemExit) as exit_info:
        load_tool('analysis_tools/benchmark_dense.py').parse_args(['--det-size', '100'])
    assert exit_info.value.code == 2
    assert '--det-size must be a multiple of the patch size 16' in capsys.readouterr().err
