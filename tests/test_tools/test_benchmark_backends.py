"""tools/analysis_tools/benchmark.py --backends: every model under every backend in the same
rounds, the rows backend by backend (ONNX export and ONNX Runtime stood in for: their
outputs are tested in tests/test_deployment)."""
import json

import pytest
import torch

from helpers.guides import command, run_command
from helpers.tools import REPO, load_tool
from mmvitdyn.benchmark import backends


def test_rows_of_each_backend_side_by_side(tmp_path, monkeypatch):
    tool = load_tool('analysis_tools/benchmark.py')
    exported, runtimes = {}, []

    class Runtime:
        """ONNX Runtime's stand-in: runs the module the stubbed export was given."""

        def __init__(self, path: str, threads: int, providers=None):
            self.module, self.threads, self.providers = exported[path][0], threads, providers
            runtimes.append(self)

        def __call__(self, images):
            return self.module(images)

    monkeypatch.setattr(backends, 'export_onnx',
                        lambda module, example, path: exported.update({path: (module, example)}))
    monkeypatch.setattr(backends, 'OnnxRuntimeModel', Runtime)
    threads = torch.get_num_threads()
    try:
        tool.main([
            '--arch', 'tiny', '--img-size', '32', '--patch-size', '8', '--batch-sizes', '3', '1',
            '--rates', '0.25', '--runs', '2', '--min-time', '0', '--threads', '1', '--device',
            'cpu', '--backends', 'eager', 'onnx', '--json',
            str(tmp_path / 'rows.json')
        ])
    finally:
        torch.set_num_threads(threads)  # main() sets the process's threads
    rows = json.loads((tmp_path / 'rows.json').read_text())['rows']
    assert [(r['batch_size'], r['backend'], r['model'])
            for r in rows] == [(batch, backend, model) for batch in (3, 1)
                               for backend in ('eager', 'onnx')
                               for model in ('dense', 'mlp @ 0.25')]
    for eager, onnx in zip(rows[:2] + rows[4:6], rows[2:4] + rows[6:]):
        assert onnx['flop_ratio'] == eager['flop_ratio'] and onnx['act_rate'] == eager['act_rate']
        assert 'vs_eager' in onnx and 'vs_eager' not in eager
    # speed-ups against dense under the same backend
    assert [r['speedup'] for r in rows[::2]] == [1.0] * 4
    # the dense model is exported once for both batch sizes, each DyT setting once; the
    # example batch has >= 2 images; ONNX Runtime gets --threads and the CPU's provider
    examples = [example.shape[0] for _, example in exported.values()]
    assert examples == [3, 3, 2] and [r.threads for r in runtimes] == [1, 1, 1]
    assert [r.providers for r in runtimes] == [['CPUExecutionProvider']] * 3


def test_onnx_backend_needs_the_cpu_in_fp32(capsys):
    with pytest.raises(SystemExit) as exit_info:
        load_tool('analysis_tools/benchmark.py').parse_args(
            ['--device', 'cpu', '--amp', 'bf16', '--backends', 'eager', 'onnx'])
    assert exit_info.value.code == 2
    assert '--backends onnx runs ONNX Runtime on the CPU in fp32' in capsys.readouterr().err


def test_documented_onnx_command(tmp_path):
    """docs/benchmarks.md's ONNX Runtime command as typed (tiny ViT, real export and
    runtime): per batch size the eager then the ONNX Runtime rows of dense and DyT, the
    FLOP ratio of a backend's DyT row the same, ONNX Runtime's rows with ``vs_eager``."""
    tokens = command(REPO / 'docs/benchmarks.md',
                     'python tools/analysis_tools/benchmark.py --backends eager onnx')
    run_command(tokens, tmp_path)
    rows = json.loads((tmp_path / tokens[tokens.index('--json') + 1]).read_text())['rows']
    assert [(r['batch_size'], r['backend'], r['model'])
            for r in rows] == [(batch, backend, model) for batch in (16, 1)
                               for backend in ('eager', 'onnx') for model in ('dense', 'mlp @ 0.5')]
    for eager, onnx in zip(rows[1::4], rows[3::4]):
        assert onnx['flop_ratio'] == eager['flop_ratio'] > 1.2
        assert onnx['vs_eager'] > 0 and onnx['images_per_s']['median'] > 0


def test_documented_clip_onnx_command(tmp_path):
    """docs/benchmarks.md's clip command with ONNX Runtime as typed (tiny ViT, 2 frames, one
    clip a call: the export's example is that clip twice; real export and runtime): the
    eager then the ONNX Runtime rows of dense and DyT, per clip, of 2 frames; the FLOP
    ratio of a backend's DyT row the same; ``vs_eager`` on ONNX Runtime's rows only."""
    tokens = command(REPO / 'docs/benchmarks.md',
                     'python tools/analysis_tools/benchmark.py --frames 2 --backends eager onnx')
    run_command(tokens, tmp_path)
    rows = json.loads((tmp_path / tokens[tokens.index('--json') + 1]).read_text())['rows']
    assert [(r['backend'], r['model']) for r in rows] == [(backend, model)
                                                          for backend in ('eager', 'onnx')
                                                          for model in ('dense', 'mlp @ 0.5')]
    assert {(r['batch_size'], r['frames']) for r in rows} == {(1, 2)}
    assert rows[3]['flop_ratio'] == rows[1]['flop_ratio'] > 1.2
    assert [('vs_eager' in r) for r in rows] == [False, False, True, True]
    assert all(r['clips_per_s']['median'] > 0 and 'images_per_s' not in r for r in rows)
