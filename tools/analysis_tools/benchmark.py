"""Throughput of DyT against the dense model, and training-step memory.

    python tools/analysis_tools/benchmark.py [--arch base] [--img-size 224] [--patch-size 16]
        [--dispatch mlp [attn ...]] [--rates 1.0 0.5] [--batch-sizes 16 1] [--runs 5]
        [--threads N] [--no-memory]
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

Trained models (``--trained``): each config's model with its checkpoint,
built as the Runner builds it, timed side by side in the same way on the
first ``--num-images`` images of its validation set (one batch), the first
model being the baseline of the speed-up; FLOPs per image are counted on
the same images (DyT: at the tokens each image ran).

Training memory: one training step of ``DyTImageClassifier`` per fresh
subprocess (the only honest peak on the CPU): the peak resident set size
during the step (the kernel's peak counter is reset just before it) minus
the size before the step. Compared: DyT's two-pass step (complete pass
back-propagated first), the same losses in one graph (as under a distributed
wrapper), the dynamic pass alone, and AdaptFormer (dense, one pass).
"""
import argparse
import json
import math
import os
import os.path as osp
import subprocess
import sys
import time
from typing import Dict, List, NamedTuple

import torch
from torch import nn

from mmvitdyn.analysis import (DyTFlopCounter, TensorForward, calibrate_gates, count_flops,
                               find_dyt_backbone, part_rates, val_images)
from mmvitdyn.apis import init_model
from mmvitdyn.engine.runner_setup import add_trust_argument, load_config
from mmvitdyn.models import DyTViT
from mmvitdyn.utils import dump_json_atomically

# The training steps compared: DyTImageClassifier arguments and how the step runs.
TRAIN_MODES = {
    'dyt two-pass': dict(dispatch='mlp', complete_loss=True, distill_loss=True, step='train_step'),
    'dyt one graph': dict(dispatch='mlp', complete_loss=True, distill_loss=True, step='loss'),
    'dyt dynamic only':
    dict(dispatch='mlp', complete_loss=False, distill_loss=False, step='train_step'),
    'adaptformer': dict(dispatch=None, complete_loss=False, distill_loss=False, step='train_step'),
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='DyT vs dense: throughput and training memory')
    parser.add_argument('--arch', default='base', choices=sorted(DyTViT.arch_zoo))
    parser.add_argument('--img-size', type=int, default=224)
    parser.add_argument('--patch-size', type=int, default=16)
    parser.add_argument('--adapter-dim', type=int, default=64, help='adapter bottleneck d')
    parser.add_argument(
        '--dispatch', nargs='+', default=['mlp'], choices=['mlp', 'attn', 'attn_mlp', 'layer'])
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
    parser.add_argument('--no-memory', action='store_true', help='skip the training-step memory')
    parser.add_argument('--memory-batch', type=int, default=16)
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
    add_trust_argument(parser)
    args = parser.parse_args(argv)
    if args.trained is not None and len(args.trained) % 2:
        parser.error(f'--trained takes pairs of CONFIG CHECKPOINT, got {len(args.trained)} '
                     f'paths: {args.trained}')
    return args


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


def train_step_worker(args) -> None:
    """One training step in this (fresh) process; print its peak RSS growth as JSON."""
    from mmengine.optim import OptimWrapper
    from mmengine.registry import MODELS, init_default_scope
    from mmpretrain.structures import DataSample

    mode = TRAIN_MODES[args.train_step_worker]
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
                adapter_cfg=dict(bottleneck=args.adapter_dim)),
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
    before = reset_peak_rss()
    start = time.perf_counter()
    if mode['step'] == 'train_step':
        model.train_step(data, optim_wrapper)
    else:
        processed = model.data_preprocessor(data, True)
        loss, _ = model.parse_losses(model.loss(processed['inputs'], processed['data_samples']))
        optim_wrapper.update_params(loss)
    seconds = time.perf_counter() - start
    peak = memory_status_kib('VmHWM') * 1024
    print(
        json.dumps(dict(growth_mb=(peak - before) / 2**20, peak_mb=peak / 2**20, seconds=seconds)))


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


def benchmark_train_memory(args) -> None:
    print(f'\nTraining step, batch {args.memory_batch}: peak RSS growth over the step '
          '(one fresh process each)')
    passthrough = [
        '--arch', args.arch, '--img-size', args.img_size, '--patch-size', args.patch_size,
        '--adapter-dim', args.adapter_dim, '--threads', args.threads, '--memory-batch',
        args.memory_batch, '--seed', args.seed
    ]
    results = {}
    for mode in TRAIN_MODES:
        proc = subprocess.run(
            [sys.executable, __file__, '--train-step-worker', mode, *map(str, passthrough)],
            capture_output=True,
            text=True,
            check=False)
        if proc.returncode != 0:
            raise RuntimeError(f'training-step worker {mode!r} failed:\n{proc.stderr[-3000:]}')
        results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
    base = results['dyt dynamic only']['growth_mb']
    print(f'{"step":<18} {"growth MB":>10} {"vs dynamic only":>16} {"peak RSS MB":>12} {"s":>7}')
    for mode, r in results.items():
        print(f'{mode:<18} {r["growth_mb"]:>10.0f} {r["growth_mb"] / base:>16.2f} '
              f'{r["peak_mb"]:>12.0f} {r["seconds"]:>7.1f}')


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.train_step_worker:
        train_step_worker(args)
        return
    if args.trained:
        benchmark_trained(args)
        return
    benchmark_inference(args)
    if not args.no_memory:
        benchmark_train_memory(args)


if __name__ == '__main__':
    main()
