"""tools/analysis_tools/benchmark_dense.py at a small size, in-process."""
import json

import pytest
import torch

from helpers.guides import command, run_command
from helpers.tools import REPO, load_tool
from mmvitdyn.analysis import calibrate_gates
from mmvitdyn.deployment import OnnxRuntimeModel, export_onnx


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


# A ViT of 8 blocks of 32 dims: ViTDet's blocks 1, 3, 5, 7 global, the others windowed.
SMALL_ARCH = dict(embed_dims=32, num_layers=8, num_heads=4, feedforward_channels=64)


@pytest.mark.parametrize('task, size', [('det', 256), ('seg', 64)])
def test_exported_backbones_equal_eager_at_another_batch(task, size, tmp_path):
    """The backbones timed, dense (complete mode) and DyT, exported at batch 2 and run by
    ONNX Runtime at batch 3: each feature map within 1e-4 of eager PyTorch's. ViTDet at 256
    px: a 16 x 16 grid, its 14 x 14 windows padded to 28 x 28, random relative-position
    tables; DyT's gates calibrated to 0.5 on the export batch run some tokens of the other."""
    tool = load_tool('analysis_tools/benchmark_dense.py')
    torch.manual_seed(0)
    backbone, [(_, model)] = tool.TASKS[task](SMALL_ARCH, size, False)
    backbone.init_weights()
    backbone.eval()
    for name, table in backbone.named_parameters():
        if 'rel_pos' in name:
            torch.nn.init.normal_(table, std=0.5)
    assert task == 'seg' or sum('rel_pos' in n for n, _ in backbone.named_parameters()) == 16
    example, x = torch.randn(2, 3, size, size), torch.randn(3, 3, size, size)
    calibrate_gates(backbone, example, 0.5)
    outputs = {}
    for mode, module in (('dense', tool.CompleteMode(model, backbone)), ('DyT', model)):
        path = str(tmp_path / f'{mode}.onnx')
        export_onnx(module, example, path)
        with torch.no_grad():
            expected = module(x)
        if mode == 'DyT':
            assert 0.2 < backbone.activation_rates()['act_rate'] < 0.8
        got = OnnxRuntimeModel(path, threads=1)(x)
        expected = expected if isinstance(expected, tuple) else (expected, )
        got = got if isinstance(got, tuple) else (got, )
        assert [g.shape for g in got] == [e.shape for e in expected]
        assert expected[0].shape[0] == 3 and len(expected) == (1 if task == 'det' else 4)
        for out, ref in zip(got, expected):
            torch.testing.assert_close(out, ref, atol=1e-4, rtol=0)
        outputs[mode] = expected
    # the dense model runs every token: its features differ from DyT's
    assert (outputs['dense'][-1] - outputs['DyT'][-1]).abs().max() > 1e-2


def test_documented_onnx_command(tmp_path):
    """docs/benchmarks.md's benchmark_dense.py ONNX Runtime command as typed (ViT-tiny at
    64 px, real export and runtime): per task the eager then the ONNX Runtime rows of dense
    and DyT; a speed-up is the ratio of the images/s of DyT and dense under the same
    backend, ``vs_eager`` that of the same model under ONNX Runtime and in eager."""
    tokens = command(REPO / 'docs/benchmarks.md',
                     'python tools/analysis_tools/benchmark_dense.py --backends eager onnx')
    printed = run_command(tokens, tmp_path).stdout
    rows = json.loads((tmp_path / tokens[tokens.index('--json') + 1]).read_text())['rows']
    assert [(r['task'], r['part'], r['backend'], r['model'])
            for r in rows] == [(task, 'backbone', backend, model) for task in ('det', 'seg')
                               for backend in ('eager', 'onnx') for model in ('dense', 'DyT')]
    speed = {(r['task'], r['backend'], r['model']): r['images_per_s']['median'] for r in rows}
    for r in rows:
        key = (r['task'], r['backend'])
        assert r['speedup'] == pytest.approx(
            speed[key + (r['model'], )] / speed[key + ('dense', )], rel=1e-12)
        if r['backend'] == 'eager':
            assert 'vs_eager' not in r
        else:
            assert r['vs_eager'] == pytest.approx(
                speed[r['task'], 'onnx', r['model']] / speed[r['task'], 'eager', r['model']],
                rel=1e-12)
    for eager, onnx in zip(rows[1::4], rows[3::4]):  # DyT's: the same model, the same FLOPs
        assert onnx['flop_ratio'] == eager['flop_ratio'] > 1.05
        assert isinstance(onnx['meets_target'], bool)
    assert 'backend' in printed and 'vs eager' in printed


def test_onnx_providers_are_checked_against_the_device(capsys):
    parse_args = load_tool('analysis_tools/benchmark_dense.py').parse_args
    with pytest.raises(SystemExit) as exit_info:
        parse_args([
            '--device', 'cpu', '--backends', 'eager', 'onnx', '--onnx-providers',
            'CUDAExecutionProvider'
        ])
    assert exit_info.value.code == 2
    assert ('--backends onnx with --onnx-providers CUDAExecutionProvider runs ONNX Runtime on '
            'the GPU: it needs --device cuda (got --device cpu)') in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(['--backends', 'onnx', '--onnx-providers', 'ROCMExecutionProvider'])
    assert ("--onnx-providers: invalid choice: 'ROCMExecutionProvider' (choose from "
            "'CPUExecutionProvider', 'CUDAExecutionProvider', 'TensorrtExecutionProvider')"
            ) in capsys.readouterr().err
