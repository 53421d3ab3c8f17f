"""Throughput of DyT against the dense model, and training-step memory.

    python tools/analysis_tools/benchmark.py [--arch base] [--img-size 224] [--patch-size 16]
        [--dispatch mlp [attn ...]] [--rates 1.0 0.5] [--batch-sizes 16 1] [--runs 5]
        [--threads N] [--no-memory] [--memory-batch 16] [--train-runs 3]
    python tools/analysis_tools/benchmark.py --reduction [--reduction-rate 0.5] [--arch base] ...
    python tools/analysis_tools/benchmark.py --trained CONFIG CHECKPOINT [CONFIG CHECKPOINT ...]
        [--num-images 64] [--runs 5] [--threads N] [--json FILE]

Inference: the dense model is ``DyTViT(dispatch=None)`` (ViT + adapters,
AdaptFormer); each DyT setting is the same weights with token dispatchers
whose gate biases are calibrated on the benchmark batch to the wanted
activation rate (the weights are random: speed does not depend on them).
Settings are timed in eval mode under ``torch.inference_mode()``, alternating
in every run; the median over runs is reported with the speed-up over dense
(median of the per-run ratios: a run's settings share the machine's load),
the FLOP ratio (dense / DyT FLOPs per image: the ideal speed-up) and their
quotient (1.0 = all the FLOP saving becomes speed), by wall clock and by
process CPU time (steadier on a shared machine, with ``--threads 1``).

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
first ``--num-images`` images of its validation set (one batch), the first
model being the baseline of the speed-up; FLOPs per image are counted on
the same images (DyT: at the tokens each image ran).

Training memory and step time: one training step of ``DyTImageClassifier``
per fresh subprocess (the only honest peak on the CPU): the peak resident
set size during the step (the kernel's peak counter is reset just before
it) minus the size before the step. Step time: the single-process modes
built in one process and timed alternating, ``--train-runs`` runs of one
step each (median, and median of the per-run ratios to the dynamic pass).
Compared: DyT's two-pass step (complete pass back-propagated first), the
same step without the complete pass's CE (its pass then builds no graph),
the same losses in one graph (what mmengine's own distributed wrapper runs),
the two-pass step under ``CPUTwoPassDistributedDataParallel`` (2 gloo
processes, each with the batch and half the threads; the larger rank's
figures), the dynamic pass alone, and AdaptFormer (dense, one pass).
"""
import argparse
import json
import math
import os
import os.path as osp
import socket
import subprocess
import sys
import time
from typing import Callable, Dict, List, NamedTuple

import torch
import torch.distributed as dist
from mmengine.registry import MODEL_WRAPPERS, MODELS
from torch import nn

from mmvitdyn.analysis import (DyTFlopCounter, TensorForward, calibrate_gates, count_flops,
                               find_dyt_backbone, part_rates, val_images)
from mmvitdyn.apis import init_model
from mmvitdyn.engine.runner_setup import load_config
from mmvitdyn.models import DyTViT
from mmvitdyn.models.layers import DISPATCH_PARTS
from mmvitdyn.utils import (TRUST_FLAG, TRUST_OPTION, dump_json_atomically, trusted_checkpoints,
                            trusted_names)

# The training steps compared: DyTImageClassifier arguments, how the step runs
# and in how many processes (gloo ranks; 1 = no wrapper).
TRAIN_MODES = {
    'dyt two-pass':
    dict(dispatch='mlp', complete_loss=True, distill_loss=True, step='train_step'),
    'dyt two-pass no CE\'':
    dict(dispatch='mlp', complete_loss=False, distill_loss=True, step='train_step'),
    'dyt one graph':
    dict(dispatch='mlp', complete_loss=True, distill_loss=True, step='loss'),
    'dyt dynamic only':
    dict(dispatch='mlp', complete_loss=False, distill_loss=False, step='train_step'),
    'adaptformer':
    dict(dispatch=None, complete_loss=False, distill_loss=False, step='train_step'),
    'dyt two-pass 2 ranks':
    dict(dispatch='mlp', complete_loss=True, distill_loss=True, step='train_step', ranks=2),
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='DyT vs dense: throughput and training memory')
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
    parser.add_argument('--batch-sizes', type=int, nargs='+', default=[16, 1])
    parser.add_argument('--runs', type=int, default=5, help='alternating runs (median reported)')
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
        '--reduction',
        action='store_true',
        help='time the token-reduction methods (REDUCTION_METHODS) against AdaptFormer')
    parser.add_argument(
        '--reduction-rate',
        type=float,
        default=0.5,
        help='--reduction: activation rate of DyT (its FLOPs set ToMe\'s r)')
    parser.add_argument('--no-memory', action='store_true', help='skip the training-step memory')
    parser.add_argument('--memory-batch', type=int, default=16)
    parser.add_argument(
        '--train-runs',
        type=int,
        default=3,
        help='alternating runs of one training step per single-process mode (0: no timing)')
    parser.add_argument('--train-step-worker', choices=list(TRAIN_MODES), help=argparse.SUPPRESS)
    parser.add_argument(
        '--trained',
        nargs='+',
        metavar='CONFIG CHECKPOINT',
        help='time trained models instead: pairs of config and checkpoint')
    parser.add_argument(
        '--num-images',
        type=int,
        default=64,
        help='validation images (one batch) that --trained models are timed on')
    parser.add_argument('--json', help='--trained: also write the figures to this JSON file')
    parser.add_argument(TRUST_FLAG, **TRUST_OPTION)
    args = parser.parse_args(argv)
    if args.trust_checkpoint is not None and not args.trained:
        parser.error('--trust-checkpoint applies to the checkpoints of --trained; no other mode '
                     'loads one')
    if args.trained is not None and len(args.trained) % 2:
        parser.error(f'--trained takes pairs of CONFIG CHECKPOINT, got {len(args.trained)} '
                     f'paths: {args.trained}')
    return parser, args


def build_backbone(args, dispatch) -> DyTViT:
    return DyTViT(
        arch=args.arch,
        img_size=args.img_size,
        patch_size=args.patch_size,
        dispatch=dispatch,
        adapter_cfg=dict(bottleneck=args.adapter_dim))


class Setting(NamedTuple):
    name: str
    model: nn.Module
    flops: float  # per image, mean over the batch
    rate: float  # activation rate measured in evaluation
    inputs: torch.Tensor  # the batch it is timed on (B, 3, H, W)


def settings_for_batch(args, dense: DyTViT, images: torch.Tensor) -> List[Setting]:
    """Dense first, then every dispatch variant at every rate, calibrated on ``images``."""
    settings = [Setting('dense', dense, float(count_flops(dense, images[:1])), 1.0, images)]
    for dispatch in args.dispatch:
        model = build_backbone(args, dispatch).eval()
        model.load_state_dict(dense.state_dict(), strict=False)
        counter = DyTFlopCounter(model, images[:1])
        for rate in args.rates:
            calibrated = build_backbone(args, dispatch).eval()
            calibrated.load_state_dict(model.state_dict())
            calibrate_gates(calibrated, images, rate)
            with torch.inference_mode():
                calibrated(images)
            flops = float(counter(calibrated.dispatch_masks()).mean())
            settings.append(
                Setting(f'{dispatch} @ {rate:g}', calibrated, flops,
                        calibrated.activation_rates()['act_rate'], images))
    return settings


def trained_settings(pairs: List[str], num_images: int) -> List[Setting]:
    """A setting per (config, checkpoint): the model on its first validation images."""
    settings = []
    for config, checkpoint in zip(pairs[::2], pairs[1::2]):
        cfg = load_config(config, {'val_dataloader.batch_size': num_images})
        model = init_model(cfg, checkpoint)
        inputs = next(val_images(cfg, model, num_images))
        traced = TensorForward(model)
        backbone = find_dyt_backbone(model)
        with torch.inference_mode():
            if backbone is not None and backbone.dispatch is not None:
                counter = DyTFlopCounter(traced, inputs[:1])
                traced(inputs)
                flops, rate = float(counter.from_last_forward().mean()), float(
                    part_rates(backbone.dispatch_masks())[1].mean())
            else:
                flops, rate = float(count_flops(traced, inputs[:1])), 1.0
        name = osp.splitext(osp.basename(config))[0]
        settings.append(Setting(name, traced, flops, rate, inputs))
    return settings


def benchmark_trained(args) -> None:
    settings = trained_settings(args.trained, args.num_images)
    samples = time_settings(settings, args.runs, args.min_time)
    base = settings[0]
    print(f'Trained models on {base.inputs.shape[0]} validation images, {torch.get_num_threads()} '
          f'threads; medians of {args.runs} runs (speed-up: of the per-run ratios to the first)')
    header = (f'{"model":<48} {"act.":>5} {"img/s":>8} {"speed-up":>8} {"GFLOPs":>8} '
              f'{"FLOP ratio":>10} {"speed-up/FLOP ratio":>19}')
    print(header)
    print('-' * len(header))
    rows = []
    for s in settings:
        wall = float(samples[s.name][:, 0].median())
        speedup = float((samples[s.name][:, 0] / samples[base.name][:, 0]).median())
        flop_ratio = base.flops / s.flops
        rows.append(
            dict(
                name=s.name,
                activation_rate=s.rate,
                images_per_s=wall,
                speedup=speedup,
                gflops=s.flops / 1e9,
                flop_ratio=flop_ratio))
        print(f'{s.name:<48} {s.rate:>5.2f} {wall:>8.1f} {speedup:>8.3f} {s.flops / 1e9:>8.4f} '
              f'{flop_ratio:>10.3f} {speedup / flop_ratio:>19.3f}')
    if args.json:
        dump_json_atomically(
            dict(
                threads=torch.get_num_threads(),
                runs=args.runs,
                num_images=int(base.inputs.shape[0]),
                models=rows), args.json)


def time_settings(settings: List[Setting], runs: int, min_time: float) -> Dict[str, torch.Tensor]:
    """Images/s of each setting in each run, by wall clock and by process CPU time.

    Settings alternate within every run (in a rotating order), so the
    settings of one run see about the same load of a shared machine.

    Returns:
        dict: Setting name -> (runs, 2) images/s, columns wall and CPU time.
    """
    repeats, samples = {}, {s.name: [] for s in settings}
    with torch.inference_mode():
        for s in settings:  # warm up, and choose how many forwards one timing covers
            s.model(s.inputs)
            start = time.perf_counter()
            s.model(s.inputs)
            repeats[s.name] = max(1, math.ceil(min_time / (time.perf_counter() - start)))
        for run in range(runs):
            shift = run % len(settings)  # no setting always goes first
            for s in settings[shift:] + settings[:shift]:
                wall, cpu = time.perf_counter(), time.process_time()
                for _ in range(repeats[s.name]):
                    s.model(s.inputs)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                num = repeats[s.name] * s.inputs.shape[0]
                samples[s.name].append((num / wall, num / cpu))
    return {name: torch.tensor(values, dtype=torch.float64) for name, values in samples.items()}


def benchmark_inference(args) -> None:
    torch.manual_seed(args.seed)
    dense = build_backbone(args, None).eval()
    print(f'ViT {args.arch}, {args.img_size}px, patch {args.patch_size}, adapter d='
          f'{args.adapter_dim}; {torch.get_num_threads()} threads; medians of {args.runs} runs '
          '(speed-up: of the per-run ratios to dense)')
    header = (f'{"batch":>5}  {"setting":<12} {"act.":>5} {"img/s":>7} {"speed-up":>8} '
              f'{"GFLOPs":>7} {"FLOP ratio":>10} {"speed-up/FLOP ratio":>19} | '
              f'{"CPU-time img/s":>14} {"speed-up":>8} {"/FLOP ratio":>11}')
    print(header)
    print('-' * len(header))
    for batch in args.batch_sizes:
        images = torch.randn(batch, 3, args.img_size, args.img_size)
        settings = settings_for_batch(args, dense, images)
        samples = time_settings(settings, args.runs, args.min_time)
        for s in settings:
            (wall, cpu), flop_ratio = samples[s.name].median(0).values, settings[0].flops / s.flops
            speedup_wall, speedup_cpu = (samples[s.name] / samples['dense']).median(0).values
            print(f'{batch:>5}  {s.name:<12} {s.rate:>5.2f} {wall:>7.2f} '
                  f'{speedup_wall:>8.3f} {s.flops / 1e9:>7.3f} {flop_ratio:>10.3f} '
                  f'{speedup_wall / flop_ratio:>19.3f} | {cpu:>14.2f} '
                  f'{speedup_cpu:>8.3f} {speedup_cpu / flop_ratio:>11.3f}')


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
    lambda rate, r: dict(type='DynamicViT', keep_rate=0.7, prune_loc=(3, 6, 9)),
}


def build_reduction_backbone(args, dense: DyTViT, method: dict) -> nn.Module:
    """The backbone of ``method`` (a config with its type), holding ``dense``'s
    weights, in eval mode."""
    cfg = dict(
        arch=args.arch,
        img_size=args.img_size,
        patch_size=args.patch_size,
        adapter_cfg=dict(bottleneck=args.adapter_dim))
    model = MODELS.build({**cfg, **method}).eval()
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


def benchmark_reduction(args) -> None:
    """Token-reduction methods at matched FLOPs next to DyT, against AdaptFormer."""
    torch.manual_seed(args.seed)
    dense = build_backbone(args, None).eval()
    batch = args.batch_sizes[0]
    images = torch.randn(batch, 3, args.img_size, args.img_size)
    rate = args.reduction_rate
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
    samples = time_settings(settings, args.runs, args.min_time)
    print(f'Token reduction: ViT {args.arch}, {args.img_size}px, patch {args.patch_size}, '
          f'adapter d={args.adapter_dim}, batch {batch}; DyT at rate {rate:g}, ToMe r={r} '
          'per block (FLOPs matched to DyT), EViT / DynamicViT keep 0.7 at blocks 3, 6, 9; '
          f'{torch.get_num_threads()} threads; medians of {args.runs} runs (speed-up: of the '
          'per-run ratios to AdaptFormer)')
    header = (f'{"method":<26} {"act.":>5} {"img/s":>8} {"speed-up":>8} {"GFLOPs":>8} '
              f'{"FLOP ratio":>10} {"speed-up/FLOP ratio":>19}')
    print(header)
    print('-' * len(header))
    for s in settings:
        wall, flop_ratio = float(samples[s.name][:, 0].median()), settings[0].flops / s.flops
        speedup = float((samples[s.name][:, 0] / samples['AdaptFormer'][:, 0]).median())
        print(f'{s.name:<26} {s.rate:>5.2f} {wall:>8.2f} {speedup:>8.3f} {s.flops / 1e9:>8.3f} '
              f'{flop_ratio:>10.3f} {speedup / flop_ratio:>19.3f}')


class TrainStep(NamedTuple):
    """A training mode's model, optimiser and batch; ``run()`` makes one step."""
    mode: dict
    model: nn.Module  # the classifier, or its distributed wrapper
    optim_wrapper: object
    data: dict

    def run(self) -> None:
        if self.mode['step'] == 'train_step':
            self.model.train_step(self.data, self.optim_wrapper)
        else:
            processed = self.model.data_preprocessor(self.data, True)
            losses = self.model.loss(processed['inputs'], processed['data_samples'])
            loss, _ = self.model.parse_losses(losses)
            self.optim_wrapper.update_params(loss)


def build_train_step(args, name: str) -> TrainStep:
    """``DyTImageClassifier`` of TRAIN_MODES[name] (100 classes) on a random batch of
    ``--memory-batch`` images, with AdamW; wrapped when a process group is initialised."""
    from mmengine.optim import OptimWrapper
    from mmengine.registry import MODELS, init_default_scope
    from mmpretrain.structures import DataSample

    mode = TRAIN_MODES[name]
    torch.manual_seed(args.seed)
    init_default_scope('mmpretrain')
    model = MODELS.build(
        dict(
            type='DyTImageClassifier',
            complete_loss=mode['complete_loss'],
            distill_loss=mode['distill_loss'],
            backbone=dict(
                type='DyTViT',
                arch=args.arch,
                img_size=args.img_size,
                patch_size=args.patch_size,
                dispatch=mode['dispatch'],
                adapter_cfg=dict(bottleneck=args.adapter_dim),
                allow_random_frozen=True),  # time and memory do not depend on the weights
            head=dict(
                type='LinearClsHead',
                num_classes=100,
                in_channels=DyTViT.arch_zoo[args.arch]['embed_dims'])))
    model.train()
    optim_wrapper = OptimWrapper(
        torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3))
    batch = args.memory_batch
    data = dict(
        inputs=list(
            torch.randint(0, 256, (batch, 3, args.img_size, args.img_size), dtype=torch.uint8)),
        data_samples=[DataSample().set_gt_label(i % 100) for i in range(batch)])
    if dist.is_initialized():
        model = MODEL_WRAPPERS.build(
            dict(type='CPUTwoPassDistributedDataParallel', broadcast_buffers=False),
            default_args=dict(module=model))
    return TrainStep(mode, model, optim_wrapper, data)


def train_step_worker(args) -> None:
    """One training step in this (fresh) process; print its peak RSS growth as JSON."""
    if TRAIN_MODES[args.train_step_worker].get('ranks', 1) > 1:
        dist.init_process_group('gloo', init_method='env://')  # variables set by the caller
    step = build_train_step(args, args.train_step_worker)
    if dist.is_initialized():
        dist.barrier()
    before = reset_peak_rss()
    start = time.perf_counter()
    step.run()
    seconds = time.perf_counter() - start
    peak = memory_status_kib('VmHWM') * 1024
    print(
        json.dumps(dict(growth_mb=(peak - before) / 2**20, peak_mb=peak / 2**20, seconds=seconds)))


def time_train_steps(args) -> Dict[str, torch.Tensor]:
    """Seconds per training step of each single-process mode, in this process.

    The modes alternate within every run (rotating order, after a warm-up
    step each), so they share the machine's load as the inference settings do.

    Returns:
        dict: Mode name -> (runs, 2) seconds per step, by wall clock and CPU time.
    """
    steps = {
        name: build_train_step(args, name)
        for name, mode in TRAIN_MODES.items() if mode.get('ranks', 1) == 1
    }
    for step in steps.values():
        step.run()
    samples = {name: [] for name in steps}
    names = list(steps)
    for run in range(args.train_runs):
        shift = run % len(names)
        for name in names[shift:] + names[:shift]:
            wall, cpu = time.perf_counter(), time.process_time()
            steps[name].run()
            samples[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    return {name: torch.tensor(values, dtype=torch.float64) for name, values in samples.items()}


def memory_status_kib(field: str) -> int:
    """A ``/proc/self/status`` size (``VmRSS``, ``VmHWM`` ...) in KiB."""
    with open('/proc/self/status') as f:
        line = next(line for line in f if line.startswith(field + ':'))
    return int(line.split()[1])


def reset_peak_rss() -> int:
    """Reset this process's peak resident size to the current one (Linux); return it in bytes.

    Without the reset the peak would be that of the whole process life
    (imports and model building included), not of the step.
    """
    with open('/proc/self/clear_refs', 'w') as f:
        f.write('5')
    return memory_status_kib('VmRSS') * 1024


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def run_train_step_workers(args, mode: str) -> dict:
    """Start the ``mode`` worker (one process per rank) and wait; its figures (with
    several ranks the largest of each)."""
    ranks = TRAIN_MODES[mode].get('ranks', 1)
    passthrough = [
        '--arch', args.arch, '--img-size', args.img_size, '--patch-size', args.patch_size,
        '--adapter-dim', args.adapter_dim, '--threads',
        max(1, args.threads // ranks), '--memory-batch', args.memory_batch, '--seed', args.seed
    ]
    command = [sys.executable, __file__, '--train-step-worker', mode, *map(str, passthrough)]
    env = dict(
        os.environ, MASTER_ADDR='127.0.0.1', MASTER_PORT=str(free_port()), WORLD_SIZE=str(ranks))
    procs = [
        subprocess.Popen(
            command,
            env=dict(env, RANK=str(rank), LOCAL_RANK=str(rank)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True) for rank in range(ranks)
    ]
    outputs = [proc.communicate() for proc in procs]
    for proc, (_, stderr) in zip(procs, outputs):
        if proc.returncode != 0:
            raise RuntimeError(f'training-step worker {mode!r} failed:\n{stderr[-3000:]}')
    results = [json.loads(stdout.strip().splitlines()[-1]) for stdout, _ in outputs]
    return {key: max(r[key] for r in results) for key in results[0]}


def benchmark_train_memory(args) -> None:
    print(f'\nTraining step, batch {args.memory_batch} per process: peak RSS growth over the '
          'first step (one fresh process each); then the single-process steps alternating in '
          f'one process, medians of {args.train_runs} runs (ratio: median of the per-run ratios)')
    results = {mode: run_train_step_workers(args, mode) for mode in TRAIN_MODES}
    times = time_train_steps(args) if args.train_runs > 0 else {}
    base = 'dyt dynamic only'
    print(f'{"step":<22} {"growth MB":>10} {"vs dynamic only":>16} {"peak RSS MB":>12} '
          f'{"1st step s":>10} | {"step s":>7} {"vs dynamic only":>16} {"CPU s":>7} '
          f'{"vs dynamic only":>16}')
    for mode, r in results.items():
        row = (f'{mode:<22} {r["growth_mb"]:>10.0f} '
               f'{r["growth_mb"] / results[base]["growth_mb"]:>16.2f} {r["peak_mb"]:>12.0f} '
               f'{r["seconds"]:>10.1f} |')
        if mode in times:
            (wall, cpu), (wall_ratio, cpu_ratio) = (times[mode].median(0).values,
                                                    (times[mode] / times[base]).median(0).values)
            row += f' {wall:>7.2f} {wall_ratio:>16.3f} {cpu:>7.2f} {cpu_ratio:>16.3f}'
        print(row)


def main(argv=None):
    parser, args = parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.train_step_worker:
        train_step_worker(args)
        return
    if args.trained:
        with trusted_checkpoints(trusted_names(args.trust_checkpoint, args.trained[1::2])):
            benchmark_trained(args)
        return
    if args.reduction:
        benchmark_reduction(args)
    else:
        benchmark_inference(args)
    if not args.no_memory:
        benchmark_train_memory(args)


if __name__ == '__main__':
    main()
