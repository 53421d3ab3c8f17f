"""Throughput of DyT against the dense model, on the CPU or a CUDA device.

    python tools/analysis_tools/benchmark.py [--arch base] [--img-size 224] [--patch-size 16]
        [--dispatch mlp [attn ...]] [--rates 1.0 0.5] [--batch-sizes 16 1] [--runs 5]
        [--threads N] [--device cpu|cuda|cuda:N] [--amp fp16|bf16] [--json OUT]
        [--backends eager [compile onnx]] [--onnx-providers NAME [NAME ...]]
    python tools/analysis_tools/benchmark.py --frames 8 [--arch base] [--rates 0.5] ...
    python tools/analysis_tools/benchmark.py --reduction [--reduction-rate 0.5] [--arch base] ...
    python tools/analysis_tools/benchmark.py --trained CONFIG CHECKPOINT [CONFIG CHECKPOINT ...]
        [--batch-sizes 64] [--runs 5] [--threads N] [--device ...] [--amp ...] [--json OUT]

Inference: the dense model is ``DyTViT(dispatch=None)`` (ViT + adapters,
AdaptFormer); each DyT setting is the same weights with token dispatchers
whose gate biases are calibrated on the benchmark batch to the wanted
activation rate (the weights are random: speed does not depend on them).
Settings are timed in eval mode under ``torch.inference_mode()`` (and
``torch.autocast`` with ``--amp``) by :func:`mmvitdyn.benchmark.time_interleaved`:
interleaved rounds, synchronised on a GPU. Reported per batch size: the median
images/s over the rounds with its quartiles, the speed-up over dense (the
ratio of the two median images/s shown), the FLOP ratio (dense / DyT FLOPs per
image: the ideal speed-up) and their quotient (1.0 = all the FLOP saving
becomes speed); on the CPU also by process CPU time (steadier on a shared
machine, with ``--threads 1``). FLOPs and activation rates are those of the
fp32 forward.

Clips (``--frames T``): the same comparison on video models
(:class:`~mmvitdyn.benchmark.ClipClassifier`: every frame through the ViT,
attentive pooling over the tokens of all frames, a 400-way head) fed random
clips (B, 3, T, H, W); batch sizes count clips, rows give ``clips_per_s``,
FLOPs are per clip (DyT: each frame at its active tokens; gates calibrated
over all frames of the batch). ``--backends onnx`` exports the video models
with clips of T frames as their input (the batch axis free).

Token reduction (``--reduction``): instead of the dispatch variants, one
row per entry of :data:`REDUCTION_METHODS` (DyT, its top-K ablation, ToMe,
EViT, DynamicViT, DyT + ToMe; an entry is the backbone config that differs
from AdaptFormer), on the same random weights and batch, timed side by side
against AdaptFormer. DyT runs at ``--reduction-rate`` (gates calibrated on
the batch; top-K keeps that fraction), ToMe merges the r whose FLOPs come
closest to DyT's (matched FLOPs; DyT + ToMe uses the same r), EViT and
DynamicViT keep 0.7 at blocks 3, 6, 9 (their papers' ViT setting).

Trained models (``--trained``): each config's model with its checkpoint,
built as the Runner builds it, timed side by side in the same way on the
first images of its validation set (a batch of each ``--batch-sizes``), the
first model being the baseline of the speed-up; FLOPs per image are counted
on the same images (DyT: at the tokens each image ran). Video configs
(mmaction2) are timed on their validation clips, per clip.

Backends (``--backends``, default ``eager``): every model is timed under
each backend named, all in the same interleaved rounds: ``eager`` (PyTorch),
``compile`` (``torch.compile``, inductor, through
:func:`mmvitdyn.deployment.compile_model`: DyT's packed path compiles into
one graph) and ``onnx`` (the model exported to ONNX, opset
:data:`~mmvitdyn.deployment.DEFAULT_OPSET`, and run by ONNX Runtime on the
CPU with ``--threads`` intra-op threads, or with ``--onnx-providers
CUDAExecutionProvider`` (or ``TensorrtExecutionProvider CUDAExecutionProvider``)
on a CUDA device; fp32 only). A row's speed-up and
FLOP ratio are against the first model under the same backend (ORT dense vs
ORT DyT), and ``vs_eager`` is its median images/s over the same model's in
eager. Compilation and export happen before the timing (compilation in the warm-up call).

``--json OUT`` writes the rows (model, backend, batch size, device, dtype,
images/s, speed-up, FLOPs, ratios) with the settings. Training-step memory
and time: ``benchmark_train.py``.
"""
import mmvitdyn  # noqa: F401 (first: OpenMP's wait policy, before torch loads) isort: skip
import argparse
import os
import os.path as osp
import tempfile
from typing import Callable, Dict, List, NamedTuple

import torch
from mmengine.registry import MODELS
from torch import nn

from mmvitdyn.analysis import (DyTFlopCounter, TensorForward, calibrate_gates, count_flops,
                               find_dyt_backbone, part_rates, val_images)
from mmvitdyn.benchmark import (Backends, ClipClassifier, backend_rows, format_table, iqr,
                                run_conditions, time_backends, write_report)
from mmvitdyn.checkpoint import trusted_checkpoints, trusted_names
from mmvitdyn.cli import (add_backend_options, add_timing_options, add_trust_option,
                          parse_backend_options, parse_timing_options)
from mmvitdyn.engine import load_config
from mmvitdyn.models import DyTViT
from mmvitdyn.models.layers import DISPATCH_PARTS

# --batch-sizes of each mode when none are given.
DEFAULT_BATCH_SIZES = {'inference': [16, 1], 'reduction': [16], 'trained': [64]}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='DyT vs dense: throughput')
    parser.add_argument('--arch', default='base', choices=sorted(DyTViT.arch_zoo))
    parser.add_argument('--img-size', type=int, default=224)
    parser.add_argument('--patch-size', type=int, default=16)
    parser.add_argument('--adapter-dim', type=int, default=64, help='adapter bottleneck d')
    parser.add_argument('--dispatch', nargs='+', default=['mlp'], choices=sorted(DISPATCH_PARTS))
    parser.add_argument(
        '--rates',
        type=float,
        nargs='+',
        default=[1.0, 0.5],
        help='activation rates to calibrate the dispatchers to')
    add_timing_options(parser, batch_sizes=None, runs=5)
    parser.add_argument(
        '--min-time',
        type=float,
        default=1.0,
        help='seconds each timing covers at least (repeats forwards)')
    parser.add_argument(
        '--threads',
        type=int,
        default=len(os.sched_getaffinity(0)),
        help='torch intra-op threads (default: the CPUs available)')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument(
        '--frames',
        type=int,
        help='time video models on clips of this many frames (batch sizes count clips)')
    parser.add_argument(
        '--reduction',
        action='store_true',
        help='time the token-reduction methods (REDUCTION_METHODS) against AdaptFormer')
    parser.add_argument(
        '--reduction-rate',
        type=float,
        default=0.5,
        help='--reduction: activation rate of DyT (its FLOPs set ToMe\'s r)')
    parser.add_argument(
        '--trained',
        nargs='+',
        metavar='CONFIG CHECKPOINT',
        help='time trained models instead: pairs of config and checkpoint, on the first '
        'validation images (a batch of each --batch-sizes)')
    add_backend_options(parser)
    add_trust_option(parser)
    args = parser.parse_args(argv)
    if args.trust_checkpoint is not None and not args.trained:
        parser.error('--trust-checkpoint applies to the checkpoints of --trained; no other mode '
                     'loads one')
    if args.trained is not None and len(args.trained) % 2:
        parser.error(f'--trained takes pairs of CONFIG CHECKPOINT, got {len(args.trained)} '
                     f'paths: {args.trained}')
    args.mode = 'trained' if args.trained else 'reduction' if args.reduction else 'inference'
    if args.frames is not None and (args.frames < 1 or args.mode != 'inference'):
        parser.error(f'--frames {args.frames}: a number of frames >= 1, for the dispatch '
                     'comparison (not with --reduction or --trained)')
    args.batch_sizes = args.batch_sizes or DEFAULT_BATCH_SIZES[args.mode]
    parse_timing_options(parser, args)
    parse_backend_options(parser, args)
    return parser, args


def build_backbone(args, dispatch) -> nn.Module:
    """The ViT of ``--arch`` with ``dispatch``, or with ``--frames`` the video model
    around it."""
    vit = dict(
        arch=args.arch,
        img_size=args.img_size,
        patch_size=args.patch_size,
        dispatch=dispatch,
        adapter_cfg=dict(bottleneck=args.adapter_dim))
    return DyTViT(**vit) if args.frames is None else ClipClassifier(dict(type='DyTViT', **vit))


def random_inputs(args, batch: int) -> torch.Tensor:
    """A batch of random images (B, 3, H, W), or with ``--frames`` clips (B, 3, T, H, W)."""
    frames = () if args.frames is None else (args.frames, )
    return torch.randn(batch, 3, *frames, args.img_size, args.img_size).to(args.device)


class Setting(NamedTuple):
    name: str
    model: nn.Module
    flops: float  # per input, mean over the batch
    rate: float  # activation rate measured in evaluation
    inputs: torch.Tensor  # the batch it is timed on (B, 3, H, W), clips (B, 3, T, H, W)


def settings_for_batch(args, dense: nn.Module, images: torch.Tensor) -> List[Setting]:
    """Dense first, then every dispatch variant at every rate, calibrated on ``images``."""
    settings = [Setting('dense', dense, float(count_flops(dense, images[:1])), 1.0, images)]
    for dispatch in args.dispatch:
        model = build_backbone(args, dispatch).to(args.device).eval()
        model.load_state_dict(dense.state_dict(), strict=False)
        counter = DyTFlopCounter(model, images[:1])
        for rate in args.rates:
            calibrated = build_backbone(args, dispatch).to(args.device).eval()
            calibrated.load_state_dict(model.state_dict())
            calibrate_gates(calibrated, images, rate)
            with torch.inference_mode():
                calibrated(images)
            flops = float(counter(calibrated.dispatch_masks()).mean())
            settings.append(
                Setting(f'{dispatch} @ {rate:g}', calibrated, flops,
                        calibrated.activation_rates()['act_rate'], images))
    return settings


def trained_settings(args) -> Dict[int, List[Setting]]:
    """The settings of each batch size: a setting per (config, checkpoint) of
    ``--trained``, the model on its first validation images."""
    # Imported here: mmvitdyn.apis imports mmdet and mmseg, which load mmcv's
    # compiled ops; the other modes run with mmcv-lite (tools/device_check.sh).
    from mmvitdyn.apis import init_model
    settings = {batch: [] for batch in args.batch_sizes}
    num_images = max(args.batch_sizes)
    configs = args.trained[::2]
    stems = [osp.splitext(osp.basename(config))[0] for config in configs]
    for i, (config, checkpoint) in enumerate(zip(configs, args.trained[1::2])):
        # A config given twice (two checkpoints of one run): its models are numbered.
        name = stems[i] if stems.count(stems[i]) == 1 else f'{stems[i]} #{i + 1}'
        cfg = load_config(config, {'val_dataloader.batch_size': num_images})
        model = init_model(cfg, checkpoint, device=str(args.device))
        images = next(val_images(cfg, model, num_images))
        if images.shape[0] < num_images:
            raise ValueError(f'--batch-sizes {num_images}: the validation set of {config} has '
                             f'only {images.shape[0]} images')
        traced = TensorForward(model)
        backbone = find_dyt_backbone(model)
        if backbone is None or backbone.dispatch is None:
            flops = float(count_flops(traced, images[:1]))
            for batch in args.batch_sizes:
                settings[batch].append(Setting(name, traced, flops, 1.0, images[:batch]))
            continue
        counter = DyTFlopCounter(traced, images[:1])
        for batch in args.batch_sizes:
            with torch.inference_mode():
                traced(images[:batch])
            settings[batch].append(
                Setting(name, traced, float(counter.from_last_forward().mean()),
                        float(part_rates(backbone.dispatch_masks())[1].mean()), images[:batch]))
    return settings


def time_rows(args, settings: List[Setting], backends: Backends) -> List[dict]:
    """Time ``settings`` under each of ``args.backends`` side by side on their batch; a row
    each, backend by backend (see :func:`backend_rows`; the first setting under the same
    backend is the base of the speed-ups; ``vs_eager``: the speed over eager)."""
    timed = {s.name: (s.model, s.inputs) for s in settings}
    samples = time_backends(backends, args.backends, timed, args.runs, args.device, args.min_time,
                            args.amp)
    flops = {s.name: s.flops for s in settings}
    clips = settings[0].inputs.dim() > 4  # (B, C, T, H, W); a recogniser's (B, views, C, T, H, W)
    rows = backend_rows(samples, settings[0].name, settings[0].inputs.shape[0], args.device,
                        args.amp, flops, 'clips' if clips else 'images')
    for row, s in zip(rows, settings * len(args.backends)):
        row['act_rate'] = s.rate
        if clips:
            row['frames'] = settings[0].inputs.shape[-3]
    return rows


def benchmark_trained(args, backends: Backends) -> List[dict]:
    rows = []
    for settings in trained_settings(args).values():
        rows += time_rows(args, settings, backends)
    print('Trained models on their first validation images; '
          f'{run_conditions(args.device, args.amp, args.runs)} (speed-up: over the first model)')
    return rows


def benchmark_inference(args, backends: Backends) -> List[dict]:
    torch.manual_seed(args.seed)
    dense = build_backbone(args, None).to(args.device).eval()
    rows = []
    for batch in args.batch_sizes:
        images = random_inputs(args, batch)
        rows += time_rows(args, settings_for_batch(args, dense, images), backends)
    clips = '' if args.frames is None else (f', clips of {args.frames} frames (attentive '
                                            'pooling, 400 classes)')
    print(f'ViT {args.arch}, {args.img_size}px, patch {args.patch_size}, adapter d='
          f'{args.adapter_dim}{clips}; {run_conditions(args.device, args.amp, args.runs)} '
          '(speed-up: over dense)')
    return rows


# The --reduction rows: method -> (DyT's activation rate, ToMe's r) -> its backbone
# config besides the shared architecture and adapters. All share AdaptFormer's weights.
ADAPTFORMER = dict(type='DyTViT', dispatch=None)
REDUCTION_METHODS: Dict[str, Callable[[float, int], dict]] = {
    'DyT':
    lambda rate, r: dict(type='DyTViT', dispatch='mlp', target_rate=rate),
    'DyT top-K':
    lambda rate, r: dict(
        type='DyTViT', dispatch='mlp', target_rate=rate, dispatcher_cfg=dict(mode='topk')),
    'AdaptFormer + ToMe':
    lambda rate, r: dict(ADAPTFORMER, token_reduction=dict(type='ToMe', r=r)),
    'DyT + ToMe':
    lambda rate, r: dict(
        type='DyTViT', dispatch='mlp', target_rate=rate, token_reduction=dict(type='ToMe', r=r)),
    'AdaptFormer + EViT':
    lambda rate, r: dict(
        ADAPTFORMER, token_reduction=dict(type='EViT', keep_rate=0.7, locations=(3, 6, 9))),
    'AdaptFormer + DynamicViT':
    lambda rate, r: dict(type='DynamicViT', base_rate=0.7, prune_loc=(3, 6, 9)),
}


def build_reduction_backbone(args, dense: DyTViT, method: dict) -> nn.Module:
    """The backbone of ``method`` (a config with its type), holding ``dense``'s
    weights, in eval mode."""
    cfg = dict(
        arch=args.arch,
        img_size=args.img_size,
        patch_size=args.patch_size,
        adapter_cfg=dict(bottleneck=args.adapter_dim))
    model = MODELS.build({**cfg, **method}).to(args.device).eval()
    model.load_state_dict(dense.state_dict(), strict=False)
    return model


def reduction_setting(name: str, model: nn.Module, images: torch.Tensor, rate: float) -> Setting:
    """Calibrate DyT's gates to ``rate`` (when it dispatches) and count FLOPs per image."""
    if getattr(model, 'dispatch', None) is None:  # AdaptFormer and token reductions
        return Setting(name, model, float(count_flops(model, images[:1])), 1.0, images)
    calibrate_gates(model, images, rate)
    counter = DyTFlopCounter(model, images[:1])
    with torch.inference_mode():
        model(images)
    return Setting(name, model, float(counter.from_last_forward().mean()),
                   model.activation_rates()['act_rate'], images)


def matched_tome_r(model: DyTViT, images: torch.Tensor, target: float) -> int:
    """ToMe's r whose FLOPs per image on ``model`` come closest to ``target`` (bisection:
    the FLOPs fall as r grows)."""

    def flops(r: int) -> float:
        model.token_reduction = MODELS.build(dict(type='ToMe', r=r))
        return float(count_flops(model, images[:1]))

    low, high = 0, (model.patch_resolution[0] * model.patch_resolution[1]) // 2
    while low < high:  # smallest r with flops(r) <= target
        mid = (low + high) // 2
        low, high = (low, mid) if flops(mid) <= target else (mid + 1, high)
    return min({low, max(low - 1, 0)}, key=lambda r: abs(flops(r) - target))


def benchmark_reduction(args, backends: Backends) -> List[dict]:
    """Token-reduction methods at matched FLOPs next to DyT, against AdaptFormer."""
    torch.manual_seed(args.seed)
    dense = build_backbone(args, None).to(args.device).eval()
    rate, rows = args.reduction_rate, []
    for batch in args.batch_sizes:
        images = torch.randn(batch, 3, args.img_size, args.img_size).to(args.device)
        dyt_model = build_reduction_backbone(args, dense, REDUCTION_METHODS['DyT'](rate, 0))
        dyt = reduction_setting('DyT', dyt_model, images, rate)
        r = matched_tome_r(build_reduction_backbone(args, dense, ADAPTFORMER), images, dyt.flops)
        settings = [
            Setting('AdaptFormer', dense, float(count_flops(dense, images[:1])), 1.0, images), dyt
        ]
        for name, overrides in REDUCTION_METHODS.items():
            if name != 'DyT':
                model = build_reduction_backbone(args, dense, overrides(rate, r))
                settings.append(reduction_setting(name, model, images, rate))
        rows += [
            dict(row, tome_r=r) if 'ToMe' in row['model'] else row
            for row in time_rows(args, settings, backends)
        ]
    print(f'Token reduction: ViT {args.arch}, {args.img_size}px, patch {args.patch_size}, '
          f'adapter d={args.adapter_dim}; DyT at rate {rate:g}, ToMe r per block matched to '
          "DyT's FLOPs (tome_r), EViT / DynamicViT keep 0.7 at blocks 3, 6, 9; "
          f'{run_conditions(args.device, args.amp, args.runs)} (speed-up: over '
          'AdaptFormer)')
    return rows


COLUMNS = [
    ('batch', 'batch_size', 'd'),
    ('model', 'model', 's'),
    ('backend', 'backend', 's'),
    ('act.', 'act_rate', '.2f'),
    ('ToMe r', 'tome_r', 'd'),
    ('img/s', 'images_per_s.median', '.2f'),
    ('img/s q1-q3', iqr('images_per_s', '.2f'), 's'),
    ('speed-up', 'speedup', '.3f'),
    ('GFLOPs', 'gflops', '.4f'),
    ('FLOP ratio', 'flop_ratio', '.3f'),
    ('speed-up/FLOP ratio', 'speedup_per_flop_ratio', '.3f'),
    ('vs eager', 'vs_eager', '.3f'),
]
# On the CPU: the same by process CPU time.
CPU_COLUMNS = [
    ('| CPU-time img/s', 'cpu_images_per_s.median', '.2f'),
    ('speed-up', 'cpu_speedup', '.3f'),
    ('/FLOP ratio', 'cpu_speedup_per_flop_ratio', '.3f'),
]
# With --frames: the clips' columns in place of the images' (by header).
CLIP_COLUMNS = {
    'img/s': ('clips/s', 'clips_per_s.median', '.2f'),
    'img/s q1-q3': ('clips/s q1-q3', iqr('clips_per_s', '.2f'), 's'),
    '| CPU-time img/s': ('| CPU-time clips/s', 'cpu_clips_per_s.median', '.2f'),
}
BENCHMARKS = dict(
    inference=benchmark_inference, reduction=benchmark_reduction, trained=benchmark_trained)


def main(argv=None):
    _, args = parse_args(argv)
    torch.set_num_threads(args.threads)
    with trusted_checkpoints(trusted_names(args.trust_checkpoint, (args.trained or [])[1::2])), \
            tempfile.TemporaryDirectory() as onnx_dir:
        rows = BENCHMARKS[args.mode](args, Backends(args.threads, onnx_dir, args.onnx_providers))
    columns = COLUMNS + (CPU_COLUMNS if args.device.type == 'cpu' else [])
    if rows and 'clips_per_s' in rows[0]:
        columns = [CLIP_COLUMNS.get(column[0], column) for column in columns]
    if args.mode != 'reduction':
        columns = [c for c in columns if c[1] != 'tome_r']
    if args.backends == ['eager']:
        columns = [c for c in columns if c[0] not in ('backend', 'vs eager')]
    print(format_table(rows, columns))
    if args.json:
        write_report(args.json, 'benchmark.py', vars(args), rows, args.device)


if __name__ == '__main__':
    main()
