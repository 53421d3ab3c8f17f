"""tools/device_check.sh --dry-run: the first-GPU script's sequence on the CPU, tiny shapes."""
import json
import math

import onnxruntime

from helpers.tools import run_tool


def numbers(value):
    """Every number in a JSON value."""
    if isinstance(value, dict):
        return [n for v in value.values() for n in numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in numbers(v)]
    return [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


def test_dry_run_writes_every_row(tmp_path):
    gpu_tests = 'tests/test_tools/test_device_check.py'  # none marked gpu: pytest exits 5
    proc = run_tool(['device_check.sh', '--dry-run'],
                    tmp_path,
                    env=dict(OUT=str(tmp_path / 'out'), DEVICE_CHECK_TESTS=gpu_tests))
    report = json.loads((tmp_path / 'out/device_check.json').read_text())
    assert (tmp_path / 'out/device_check.log'
            ).read_text().strip().endswith(f'report: {tmp_path / "out/device_check.json"}')
    assert report['dry_run'] is True and report['machine']['device'] == 'cpu'
    steps = {step['name']: step['rows'] for step in report['steps']}
    assert list(steps) == [
        'cls fp32', 'video fp32', 'dense fp32', 'train vit bf16', 'train vitdet bf16',
        'cls onnx cpu', 'dense onnx cpu'
    ]
    # The --backends eager onnx rows, in the dry run with the CPU's provider: both tools'
    # models in eager then exported, ONNX Runtime's rows with vs_eager.
    argv = {step['name']: step['argv'] for step in report['steps']}
    for name in ('cls onnx cpu', 'dense onnx cpu'):
        assert '--backends eager onnx --onnx-providers CPUExecutionProvider' in ' '.join(argv[name])
        assert all(('vs_eager' in r) == (r['backend'] == 'onnx') for r in steps[name])
    assert [(r['backend'], r['model']) for r in steps['cls onnx cpu']
            ] == [(b, m) for b in ('eager', 'onnx') for m in ('dense', 'mlp @ 0.5')]
    assert [(r['task'], r['backend'], r['model']) for r in steps['dense onnx cpu']
            ] == [('seg', b, m) for b in ('eager', 'onnx') for m in ('dense', 'DyT')]
    # The GPU providers are looked for, not run; the log says which this ONNX Runtime lacks.
    assert report['onnx']['used'] == {'cpu': ['CPUExecutionProvider']}
    log = (tmp_path / 'out/device_check.log').read_text()
    available = onnxruntime.get_available_providers()
    for label, providers in (('cuda', ['CUDAExecutionProvider']),
                             ('tensorrt', ['TensorrtExecutionProvider', 'CUDAExecutionProvider'])):
        missing = [name for name in providers if name not in available]
        assert (label in report['onnx']['skipped']) == bool(missing)
        if missing:
            assert (f'ONNX Runtime rows with {" ".join(providers)}: not on the CPU: ONNX Runtime '
                    f'{onnxruntime.__version__} has no {" ".join(missing)}') in log
    assert [r['model'] for r in steps['cls fp32']] == [
        'AdaptFormer', 'DyT', 'DyT top-K', 'AdaptFormer + ToMe', 'DyT + ToMe', 'AdaptFormer + EViT',
        'AdaptFormer + DynamicViT'
    ]
    # The video model on clips of 2 frames: dense, then DyT at activation 0.5.
    assert [(r['model'], r['frames'], r['act_rate'])
            for r in steps['video fp32']] == [('dense', 2, 1.0), ('mlp @ 0.5', 2, 0.5)]
    assert steps['video fp32'][1]['flop_ratio'] > 1.2
    assert [(r['task'], r['part'], r['model']) for r in steps['dense fp32']] == [
        (task, 'backbone', model) for task in ('det', 'seg') for model in ('dense', 'DyT')
    ]
    assert [(r['model'], r['with_cp'], r['dtype'])
            for r in steps['train vit bf16']] == [('dyt two-pass', False, 'bf16'),
                                                  ('dyt two-pass +cp', True, 'bf16'),
                                                  ('dyt dynamic only', False, 'bf16')]
    assert [r['model']
            for r in steps['train vitdet bf16']] == ['dyt dynamic only', 'dyt dynamic only +cp']
    for name, rows in steps.items():
        for row in rows:
            assert all(math.isfinite(n) for n in numbers(row)), (name, row)
            if name.startswith('train'):
                assert row['growth_mb'] >= 0 and row['step_s']['median'] > 0
                assert ('step_vs_no_cp' in row) == row['with_cp']
            else:
                assert row['clips_per_s' if name.startswith('video'
                                                            ) else 'images_per_s']['median'] > 0
    assert report['gpu_tests'] == dict(exit_code=5, passed=True)
    assert 'train vitdet bf16 dyt dynamic only +cp' in ' '.join(proc.stdout.split())
