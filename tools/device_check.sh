#!/usr/bin/env bash
# The first run on a fresh CUDA machine: set up what the benchmarks need, time them, run the
# GPU-marked tests, and write every figure as JSON (and print it as tables).
#
#   tools/device_check.sh [--dry-run] [--wheels DIR]
#
# Setup (only what is missing): the Python is $MMVITDYN_VENV's, else <repo>/.venv's, else
# python3. If it lacks torch, torch is pip-installed; if it lacks the OpenMMLab stack, a venv
# (<repo>/work_dirs/device-venv, with the system's site packages, so the machine's torch
# stays) gets mmengine, mmpretrain, mmsegmentation, mmdet and mmcv at the versions of
# requirements/constraints.txt, and their small requirements; --wheels DIR installs from the
# wheels (and mmcv's source archive) in DIR, for a machine without a package index (fill it
# where there is one: `pip download --no-deps -d DIR -c requirements/constraints.txt NAME...`
# with the names below, and --only-binary=:all: --python-version/--platform of that
# machine for the wheels; mmcv is a source archive). mmcv's ops
# are compiled for the CPU only (no CUDA op is built: nothing timed here runs one). They are
# needed because mmdet and mmseg load mmcv's compiled ops when imported, and the GPU-marked
# tests' collection imports them (as does benchmark.py's --trained mode); the benchmarks
# timed here import neither, and mmcv-lite suffices for them.
#
# Timed (JSON rows of each tool, one report):
#   cls       benchmark.py --reduction: AdaptFormer (the dense model), DyT, DyT top-K, ToMe,
#             DyT + ToMe, EViT, DynamicViT on ViT-B/16 224, batch 1, 64, 256; fp32 and fp16
#   video     benchmark.py --frames 8: the video model (every frame through the ViT, attentive
#             pooling), dense vs DyT at activation 0.5, ViT-B/16 224, batch 1 and 8 clips;
#             fp32 and fp16
#   dense     benchmark_dense.py --backbone-only: the ViTDet 1024 and UperNet 512 backbones,
#             dense vs DyT; fp32 and fp16
#   onnx      benchmark.py and benchmark_dense.py --backends eager onnx: the dispatch comparison
#             (ViT-B/16 224, activation 0.5, batch 1 and 64), the video model (8 frames, 1 clip;
#             not in the dry run) and the ViTDet / UperNet backbones, eager and exported to
#             ONNX, run by ONNX Runtime with each GPU provider it has (CUDAExecutionProvider;
#             TensorrtExecutionProvider, CUDA for the rest), fp32; the log says which ran, and
#             why a provider was skipped (a CPU-only ONNX Runtime: onnxruntime-gpu brings them)
#   train     benchmark_train.py: the two-pass step, one graph and the dynamic pass, each
#             without / with activation checkpointing (+cp), and AdaptFormer; ViT-B 224
#             batch 64 and ViTDet 1024 batch 2, fp16
#   gpu tests pytest -m gpu (exit code 5, no test collected, is no failure)
# Within 10 minutes on one H200 (the setup aside).
#
# --dry-run (or DEVICE_CHECK_DRY_RUN=1): the same sequence on the CPU at tiny shapes
# (ViT-tiny, 32 px images, clips of 2 frames, one batch size, one round, bf16 for fp16) in one
# process, for the test suite (it installs nothing), at its minimum per tool: cls, video and
# dense in fp32 only, the cls and UperNet onnx rows with the CPU's provider (the GPU providers'
# rows only planned: the log says which would run), three ViT training modes and two ViTDet ones. DEVICE_CHECK_TESTS: what pytest collects for the GPU-marked tests (default:
# tests). The report is $OUT/device_check.json when OUT is set, else
# work_dirs/device_check/device_check.json; the log is beside it.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DRY_RUN="${DEVICE_CHECK_DRY_RUN:-0}"
WHEELS=""
while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) DRY_RUN=1 ;;
        --wheels) WHEELS="${2:?--wheels needs a folder}"; shift ;;
        *) echo "device_check.sh: unknown option $1 (allowed: --dry-run, --wheels DIR)" >&2
           exit 2 ;;
    esac
    shift
done
REPORT_DIR="${OUT:-$REPO/work_dirs/device_check}"
mkdir -p "$REPORT_DIR"

if [ -n "${MMVITDYN_VENV:-}" ]; then
    PYTHON="$MMVITDYN_VENV/bin/python"
elif [ -x "$REPO/.venv/bin/python" ]; then
    PYTHON="$REPO/.venv/bin/python"
else
    PYTHON="$(command -v python3)"
fi

pip_install() {
    local source=()
    [ -n "$WHEELS" ] && source=(--no-index --find-links "$WHEELS")
    "$PYTHON" -m pip install -q "${source[@]}" "$@"
}

STACK='import torch, mmengine, mmpretrain, mmdet.apis, mmseg.apis'
if [ "$DRY_RUN" = 1 ] && ! "$PYTHON" -c "$STACK"; then
    echo "device_check.sh --dry-run installs nothing, and $PYTHON lacks a package (above)" >&2
    exit 1
fi
if ! "$PYTHON" -c 'import torch' 2>/dev/null; then
    pip_install torch
fi
if ! "$PYTHON" -c "$STACK" 2>/dev/null; then
    "$PYTHON" -m venv --system-site-packages "$REPO/work_dirs/device-venv"
    PYTHON="$REPO/work_dirs/device-venv/bin/python"
    CONSTRAINTS=(-c "$REPO/requirements/constraints.txt")
    pip_install --no-deps "${CONSTRAINTS[@]}" mmengine mmpretrain mmsegmentation mmdet addict \
        yapf platformdirs termcolor mat4py modelindex ordered-set prettytable terminaltables \
        pycocotools shapely
    (export MMCV_WITH_OPS=1 FORCE_CUDA=0 CUDA_VISIBLE_DEVICES="" MAX_JOBS="$(nproc)"
     pip_install --no-deps --no-build-isolation "${CONSTRAINTS[@]}" mmcv)
fi

export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
export DEVICE_CHECK_DRY_RUN="$DRY_RUN" DEVICE_CHECK_REPORT="$REPORT_DIR/device_check.json"
export DEVICE_CHECK_TESTS="${DEVICE_CHECK_TESTS:-tests}"
cd "$REPO"
set -o pipefail
"$PYTHON" - <<'PYTHON' 2>&1 | tee "$REPORT_DIR/device_check.log"
"""Every step in this one process: each tool's main() on its own JSON file."""
import importlib.util
import json
import math
import os
import sys
import tempfile

import pytest
import torch
from mmengine.logging import MMLogger

from mmvitdyn.benchmark import format_table, machine
from mmvitdyn.utils import dump_json_atomically

DRY = os.environ['DEVICE_CHECK_DRY_RUN'] == '1'
TOOLS = os.path.join('tools', 'analysis_tools')
MMLogger.get_instance('device_check', log_level='WARNING')  # no per-weight init log
if DRY:
    device, half = 'cpu', 'bf16'
    cls_size = ['--arch', 'tiny', '--img-size', '32', '--patch-size', '8']
    cls_batches, rounds = ['2'], ['--runs', '1']
    onnx_batches = ['2']
    onnx_tasks = ['seg']  # ViTDet's export: tests/test_tools/test_benchmark_dense.py
    video = ['--frames', '2', '--batch-sizes', '2']
    common = ['--device', 'cpu', '--threads', '1']
    cls_extra = ['--min-time', '0']
    dense_size = ['--arch', 'tiny', '--det-size', '64', '--seg-size', '64', '--batch-sizes', '1']
    train_vit = cls_size + ['--batch-sizes', '2', '--memory', 'in-process']
    train_vitdet = ['--arch', 'tiny', '--img-size', '64', '--batch-sizes', '1', '--memory',
                    'in-process']
    train_amp = ['--amp', half]
else:
    device, half, cls_size = 'cuda', 'fp16', []
    cls_batches, rounds = ['1', '64', '256'], ['--runs', '3']
    onnx_batches = ['1', '64']
    onnx_tasks = ['det', 'seg']
    video = ['--frames', '8', '--batch-sizes', '1', '8']
    common = ['--device', 'cuda']
    cls_extra = ['--min-time', '0.5']
    dense_size = ['--batch-sizes', '1']
    train_vit = ['--batch-sizes', '64']
    train_vitdet = ['--img-size', '1024', '--batch-sizes', '2']
    train_amp = ['--amp', half]
TRAIN_MODES = ['dyt two-pass', 'dyt two-pass +cp', 'dyt one graph', 'dyt one graph +cp',
               'dyt dynamic only', 'dyt dynamic only +cp', 'adaptformer']
VITDET_MODES = ['dyt dynamic only', 'dyt dynamic only +cp', 'adaptformer', 'adaptformer +cp']
if DRY:  # the minimum per tool: each mode kind once
    TRAIN_MODES, VITDET_MODES = TRAIN_MODES[:2] + TRAIN_MODES[4:5], VITDET_MODES[:2]
STEPS = [
    ('cls fp32', 'benchmark.py', ['--reduction', '--batch-sizes', *cls_batches, *cls_size,
                                  *cls_extra]),
    (f'cls {half}', 'benchmark.py', ['--reduction', '--batch-sizes', *cls_batches, *cls_size,
                                     *cls_extra, '--amp', half]),
    ('video fp32', 'benchmark.py', [*video, '--rates', '0.5', *cls_size, *cls_extra]),
    (f'video {half}', 'benchmark.py', [*video, '--rates', '0.5', *cls_size, *cls_extra,
                                       '--amp', half]),
    ('dense fp32', 'benchmark_dense.py', ['--task', 'det', 'seg', '--backbone-only',
                                          *dense_size]),
    (f'dense {half}', 'benchmark_dense.py', ['--task', 'det', 'seg', '--backbone-only',
                                             *dense_size, '--amp', half]),
    (f'train vit {half}', 'benchmark_train.py', ['--model', 'vit', '--modes', *TRAIN_MODES,
                                                  *train_vit, *train_amp]),
    (f'train vitdet {half}', 'benchmark_train.py', ['--model', 'vitdet', '--modes',
                                                     *VITDET_MODES, *train_vitdet, *train_amp]),
]
if DRY:  # the minimum per tool: the half-precision repeats of cls, video, dense run the same code
    STEPS = [step for step in STEPS
             if step[0] not in (f'cls {half}', f'video {half}', f'dense {half}')]

# The --backends eager onnx rows: ONNX Runtime with each GPU provider it has (onnxruntime-gpu);
# in the dry run, on the CPU, with the CPU's (the GPU providers are only looked for).
GPU_PROVIDERS = {'cuda': ['CUDAExecutionProvider'],
                 'tensorrt': ['TensorrtExecutionProvider', 'CUDAExecutionProvider']}
try:
    import onnxruntime
    runtime = f'ONNX Runtime {onnxruntime.__version__}'
    available = onnxruntime.get_available_providers()
except ImportError:
    runtime, available = 'no ONNX Runtime (pip install onnxruntime-gpu)', []
onnx_runs, onnx_skipped = {}, {}
for label, providers in GPU_PROVIDERS.items():
    missing = [name for name in providers if name not in available]
    if missing:
        onnx_skipped[label] = f'{runtime} has no {" ".join(missing)} (it has {available})'
    else:
        onnx_runs[label] = providers
if DRY:
    onnx_runs = {'cpu': ['CPUExecutionProvider']}
for label, providers in onnx_runs.items():
    onnx = ['--backends', 'eager', 'onnx', '--onnx-providers', *providers]
    STEPS += [
        (f'cls onnx {label}', 'benchmark.py', [*onnx, '--rates', '0.5', '--batch-sizes',
                                              *onnx_batches, *cls_size, *cls_extra]),
        (f'dense onnx {label}', 'benchmark_dense.py', ['--task', *onnx_tasks, '--backbone-only',
                                                      *onnx, *dense_size]),
    ]
    if not DRY:  # the dry run's cls onnx row runs the same export and runtime code
        STEPS.append((f'video onnx {label}', 'benchmark.py',
                      [*onnx, '--frames', '8', '--batch-sizes', '1', '--rates', '0.5',
                       *cls_extra]))
print(f'ONNX Runtime rows (--backends eager onnx): {runtime}; run with ' +
      (', '.join(f'{label} ({" ".join(p)})' for label, p in onnx_runs.items()) or 'none') +
      (' (dry run: the CPU)' if DRY else ''), flush=True)
for label, reason in onnx_skipped.items():
    print(f'ONNX Runtime rows with {" ".join(GPU_PROVIDERS[label])}: '
          f'{"not on the CPU" if DRY else "skipped"}: {reason}', flush=True)


def load(name):
    path = os.path.join(TOOLS, name)
    spec = importlib.util.spec_from_file_location(name[:-3], path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, TOOLS)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(TOOLS)
    return module


report = dict(machine=machine(torch.device(device)), dry_run=DRY, steps=[],
              onnx=dict(runtime=runtime, available=available, used=onnx_runs,
                        skipped=onnx_skipped))
threads = torch.get_num_threads()
with tempfile.TemporaryDirectory() as work:
    for name, tool, argv in STEPS:
        print(f'\n=== {name}: {tool} {" ".join(argv)}', flush=True)
        out = os.path.join(work, 'rows.json')
        load(tool).main([*argv, *rounds, *common, '--json', out])
        torch.set_num_threads(threads)  # a tool's main() sets the process's threads
        with open(out) as f:
            rows = json.load(f)['rows']
        report['steps'].append(dict(name=name, tool=tool, argv=argv, rows=rows))
print(f'\n=== gpu tests: pytest -m gpu {os.environ["DEVICE_CHECK_TESTS"]}', flush=True)
code = int(pytest.main(['-q', '-m', 'gpu', '-p', 'no:cacheprovider',
                        *os.environ['DEVICE_CHECK_TESTS'].split()]))
report['gpu_tests'] = dict(exit_code=code, passed=code in (0, 5))
dump_json_atomically(report, os.environ['DEVICE_CHECK_REPORT'])


def figure(row):
    """The headline figure of a row: images/s, clips/s, or the training step's seconds and MB."""
    if 'images_per_s' in row:
        return f'{row["images_per_s"]["median"]:.1f} img/s'
    if 'clips_per_s' in row:
        return f'{row["clips_per_s"]["median"]:.2f} clips/s'
    step = row.get('step_s', {}).get('median', math.nan)
    return f'{step:.3f} s/step, {row["growth_mb"]:.0f} MB'


summary = [dict(step=s['name'], model=r['model'] + (f' [{r["backend"]}]' if r.get(
                    'backend', 'eager') != 'eager' else ''), part=r.get('task', r.get('backbone', '')) +
                (f' {r["part"]}' if 'part' in r else ''), batch=r['batch_size'],
                figure=figure(r)) for s in report['steps'] for r in s['rows']]
print('\n=== summary')
print(format_table(summary, [('step', 'step', 's'), ('model', 'model', 's'),
                             ('part', 'part', 's'), ('batch', 'batch', 'd'),
                             ('figure', 'figure', 's')]))
print(f'gpu tests: pytest exit code {code}; report: {os.environ["DEVICE_CHECK_REPORT"]}')
sys.exit(0 if report['gpu_tests']['passed'] else 1)
PYTHON
