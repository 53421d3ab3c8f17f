"""Training step of DyT: peak memory and step time, on the CPU or a CUDA device.

    python tools/analysis_tools/benchmark_train.py [--arch base] [--img-size 224]
        [--patch-size 16] [--adapter-dim 64] [--batch-sizes 16] [--runs 3] [--threads N]
        [--device cpu|cuda|cuda:N] [--amp fp16|bf16] [--json OUT]

Compared (:data:`TRAIN_MODES`): DyT's two-pass step (complete pass
back-propagated first), the same step without the complete pass's CE (its
pass then builds no graph), the same losses in one graph (what mmengine's
own distributed wrapper runs), the two-pass step under its distributed
wrapper (CPU: ``CPUTwoPassDistributedDataParallel``, 2 gloo processes, each
with the batch and half the threads; CUDA: ``TwoPassDistributedDataParallel``
over NCCL, a process per GPU, at most 2; the larger rank's figures), the
dynamic pass alone, and AdaptFormer (dense, one pass). The model is
``DyTImageClassifier`` with a random frozen ViT (100 classes, AdamW).

Memory: one training step per mode and batch size, each in a fresh
subprocess (on the CPU the only honest peak): on the CPU the peak resident
set size during the step (the kernel's peak counter is reset just before it),
on CUDA ``torch.cuda.max_memory_allocated`` (its counter reset just before
it), minus the size before the step. Step time: the single-process modes
built in one process and timed side by side by
:func:`mmvitdyn.analysis.timing.time_interleaved` (a warm-up step each, then
``--runs`` interleaved rounds of one step each, synchronised on a GPU;
medians, ratios to the dynamic pass as medians of the per-round ratios;
``--runs 0``: memory only).
``--amp``: every step runs under ``torch.autocast`` in that dtype; on CUDA
through mmengine's ``AmpOptimWrapper`` (its loss scaler), on the CPU
(bfloat16, no loss scaling needed) through the plain ``OptimWrapper``.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
from typing import List, NamedTuple, Optional

import torch
import torch.distributed as dist
from mmengine.registry import MODEL_WRAPPERS

from mmvitdyn.analysis.timing import (AMP_DTYPES, amp_context, check_timing_options, dtype_name,
                                      format_table, iqr, spread, time_interleaved, timed_region,
                                      timing_options, write_report)
from mmvitdyn.engine.distributed import default_model_wrapper
from mmvitdyn.models import DyTViT

# The training steps compared: DyTImageClassifier arguments, how the step runs,
# and whether it runs under the distributed wrapper (one process per rank).
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
    'dyt two-pass DDP':
    dict(dispatch='mlp', complete_loss=True, distill_loss=True, step='train_step', ddp=True),
}
# The mode the others' memory and time are relative to.
BASE_MODE = 'dyt dynamic only'


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='DyT training step: peak memory and step time')
    parser.add_argument('--arch', default='base', choices=sorted(DyTViT.arch_zoo))
    parser.add_argument('--img-size', type=int, default=224)
    parser.add_argument('--patch-size', type=int, default=16)
    parser.add_argument('--adapter-dim', type=int, default=64, help='adapter bottleneck d')
    for flag, options in timing_options(batch_sizes=[16], runs=3):
        parser.add_argument(flag, **options)
    parser.add_argument(
        '--threads',
        type=int,
        default=len(os.sched_getaffinity(0)),
        help='torch intra-op threads (default: the CPUs available; DDP: split among the ranks)')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--train-step-worker', choices=list(TRAIN_MODES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        args.device = check_timing_options(
            args.device, args.amp, args.batch_sizes, args.runs, min_runs=0)
    except ValueError as error:
        parser.error(str(error))
    return args


class TrainStep(NamedTuple):
    """A training mode's model, optimiser and batch; ``run()`` makes one step."""
    mode: dict
    model: torch.nn.Module  # the classifier, or its distributed wrapper
    optim_wrapper: object
    data: dict
    device: torch.device
    amp: Optional[str]  # --amp

    def run(self) -> None:
        with amp_context(self.device, self.amp):
            if self.mode['step'] == 'train_step':
                self.model.train_step(self.data, self.optim_wrapper)
            else:
                processed = self.model.data_preprocessor(self.data, True)
                losses = self.model.loss(processed['inputs'], processed['data_samples'])
                loss, _ = self.model.parse_losses(losses)
                self.optim_wrapper.update_params(loss)


def build_train_step(args, name: str, batch: int, device: torch.device) -> TrainStep:
    """``DyTImageClassifier`` of TRAIN_MODES[name] (100 classes) on ``device``, a random
    batch, AdamW; wrapped for data parallelism when a process group is initialised."""
    from mmengine.optim import AmpOptimWrapper, OptimWrapper
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
                in_channels=DyTViT.arch_zoo[args.arch]['embed_dims']))).to(device)
    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    if device.type == 'cuda' and args.amp is not None:
        optim_wrapper = AmpOptimWrapper(optimizer=optimizer, dtype=AMP_DTYPES[args.amp])
    else:
        optim_wrapper = OptimWrapper(optimizer)
    data = dict(
        inputs=list(
            torch.randint(0, 256, (batch, 3, args.img_size, args.img_size), dtype=torch.uint8)),
        data_samples=[DataSample().set_gt_label(i % 100) for i in range(batch)])
    if dist.is_initialized():
        on_cpu = device.type == 'cpu'
        model = MODEL_WRAPPERS.build(
            dict(
                type=default_model_wrapper(type(model), on_cpu),
                broadcast_buffers=False,
                **({} if on_cpu else dict(device_ids=[device.index]))),
            default_args=dict(module=model))
    return TrainStep(mode, model, optim_wrapper, data, device, args.amp)


def num_ranks(name: str, device: torch.device) -> int:
    """Processes of mode ``name``: 2 gloo ranks on the CPU; a CUDA rank per GPU, at most 2."""
    if not TRAIN_MODES[name].get('ddp', False):
        return 1
    return 2 if device.type == 'cpu' else min(2, torch.cuda.device_count())


class PeakMemory:
    """The peak memory of a code region: resident set size on the CPU (Linux),
    ``torch.cuda.max_memory_allocated`` on CUDA."""

    def __init__(self, device: torch.device):
        self.device = device

    def reset(self) -> int:
        """Start a new peak at the current size; return that size in bytes.

        Without the reset the peak would be that of the whole process life
        (imports and model building included), not of the region.
        """
        if self.device.type == 'cuda':
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            return torch.cuda.memory_allocated(self.device)
        with open('/proc/self/clear_refs', 'w') as f:
            f.write('5')
        return memory_status_kib('VmRSS') * 1024

    def peak(self) -> int:
        """The peak in bytes since :meth:`reset`."""
        if self.device.type == 'cuda':
            torch.cuda.synchronize(self.device)
            return torch.cuda.max_memory_allocated(self.device)
        return memory_status_kib('VmHWM') * 1024


def memory_status_kib(field: str) -> int:
    """A ``/proc/self/status`` size (``VmRSS``, ``VmHWM`` ...) in KiB."""
    with open('/proc/self/status') as f:
        line = next(line for line in f if line.startswith(field + ':'))
    return int(line.split()[1])


def train_step_worker(args) -> None:
    """One training step in this (fresh) process; print its peak memory growth as JSON."""
    name, device = args.train_step_worker, args.device
    if TRAIN_MODES[name].get('ddp', False):  # the caller set the rendezvous variables
        if device.type == 'cuda':
            device = torch.device('cuda', int(os.environ['LOCAL_RANK']))
            torch.cuda.set_device(device)
        dist.init_process_group('gloo' if device.type == 'cpu' else 'nccl', init_method='env://')
    step = build_train_step(args, name, args.batch_sizes[0], device)
    if dist.is_initialized():
        dist.barrier()
    memory = PeakMemory(device)
    before = memory.reset()
    with timed_region(device) as seconds:
        step.run()
    peak = memory.peak()
    print(
        json.dumps(
            dict(growth_mb=(peak - before) / 2**20, peak_mb=peak / 2**20, seconds=seconds['wall'])))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def run_train_step_workers(args, name: str, batch: int) -> dict:
    """Start the ``name`` worker (one process per rank) on ``batch`` images and wait;
    its figures (with several ranks the largest of each)."""
    ranks = num_ranks(name, args.device)
    passthrough = [
        '--arch', args.arch, '--img-size', args.img_size, '--patch-size', args.patch_size,
        '--adapter-dim', args.adapter_dim, '--threads',
        max(1, args.threads // ranks), '--batch-sizes', batch, '--seed', args.seed, '--device',
        args.device, *(['--amp', args.amp] if args.amp else [])
    ]
    command = [sys.executable, __file__, '--train-step-worker', name, *map(str, passthrough)]
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
            raise RuntimeError(f'training-step worker {name!r} failed:\n{stderr[-3000:]}')
    results = [json.loads(stdout.strip().splitlines()[-1]) for stdout, _ in outputs]
    return dict({key: max(r[key] for r in results) for key in results[0]}, ranks=ranks)


def benchmark_batch(args, batch: int) -> List[dict]:
    """The rows of every mode at ``batch`` images per process."""
    memory = {name: run_train_step_workers(args, name, batch) for name in TRAIN_MODES}
    times = {}
    if args.runs > 0:
        steps = {
            name: build_train_step(args, name, batch, args.device).run
            for name in TRAIN_MODES if num_ranks(name, args.device) == 1
        }
        times = time_interleaved(steps, args.runs, args.device)
    rows = []
    for name, figures in memory.items():
        row = dict(
            model=name,
            batch_size=batch,
            device=str(args.device),
            dtype=dtype_name(args.amp),
            ranks=figures['ranks'],
            growth_mb=figures['growth_mb'],
            growth_vs_dynamic=figures['growth_mb'] / memory[BASE_MODE]['growth_mb'],
            peak_mb=figures['peak_mb'],
            first_step_s=figures['seconds'])
        if name in times:
            ratios = times[name] / times[BASE_MODE]
            row.update(step_s=spread(times[name][:, 0]), step_vs_dynamic=spread(ratios[:, 0]))
            if args.device.type == 'cpu':
                row.update(
                    cpu_step_s=spread(times[name][:, 1]), cpu_vs_dynamic=spread(ratios[:, 1]))
        rows.append(row)
    return rows


COLUMNS = [
    ('batch', 'batch_size', 'd'),
    ('step', 'model', 's'),
    ('ranks', 'ranks', 'd'),
    ('growth MB', 'growth_mb', '.0f'),
    ('vs dynamic only', 'growth_vs_dynamic', '.2f'),
    ('peak MB', 'peak_mb', '.0f'),
    ('1st step s', 'first_step_s', '.2f'),
    ('| step s', 'step_s.median', '.3f'),
    ('step s q1-q3', iqr('step_s', '.3f'), 's'),
    ('vs dynamic only', 'step_vs_dynamic.median', '.3f'),
]
# On the CPU: step time by process CPU time too.
CPU_COLUMNS = [('CPU s', 'cpu_step_s.median', '.3f'),
               ('vs dynamic only', 'cpu_vs_dynamic.median', '.3f')]


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.train_step_worker:
        train_step_worker(args)
        return
    rows = [row for batch in args.batch_sizes for row in benchmark_batch(args, batch)]
    memory = 'peak RSS' if args.device.type == 'cpu' else 'peak max_memory_allocated'
    threads = f', {torch.get_num_threads()} threads' if args.device.type == 'cpu' else ''
    print(f'Training step, ViT {args.arch} {args.img_size}px, {args.device}{threads}, '
          f'{dtype_name(args.amp)}: {memory} growth over the first step (a fresh process each), '
          f'then the single-process steps interleaved in one process, medians of {args.runs} '
          'rounds (ratios: medians of the per-round ratios)')
    print(format_table(rows, COLUMNS + (CPU_COLUMNS if args.device.type == 'cpu' else [])))
    if args.json:
        write_report(args.json, 'benchmark_train.py', vars(args), rows, args.device)


if __name__ == '__main__':
    main()
