"""Training step of DyT: peak memory and step time, on the CPU or a CUDA device.

    python tools/analysis_tools/benchmark_train.py [--model vit|vitdet] [--arch base]
        [--img-size 224] [--patch-size 16] [--adapter-dim 64] [--batch-sizes 16] [--runs 3]
        [--modes NAME ...] [--memory subprocess|in-process] [--threads N]
        [--device cpu|cuda|cuda:N] [--amp fp16|bf16] [--json OUT]

Compared for ``--model vit`` (:data:`TRAIN_MODES`): DyT's two-pass step
(complete pass back-propagated first), the same step without the complete
pass's CE (its pass then builds no graph), the same losses in one graph
(what mmengine's own distributed wrapper runs), the two-pass step under its
distributed wrapper (CPU: ``CPUTwoPassDistributedDataParallel``, 2 gloo
processes, each with the batch and half the threads; CUDA:
``TwoPassDistributedDataParallel`` over NCCL, a process per GPU, at most 2;
the larger rank's figures), the dynamic pass alone, and AdaptFormer (dense,
one pass). The model is ``DyTImageClassifier`` with a random frozen ViT
(100 classes, AdamW). ``--model vitdet`` (:data:`VITDET_MODES`): the ViTDet
backbone and simple feature pyramid of ``benchmark_dense.py`` (DyTViTDet,
windows of 14, adapter d = 128) on ``--img-size`` inputs, trained on a
stand-in task loss (the mean square of every pyramid level) plus DyT's rate
loss: its dynamic pass and AdaptFormer (a detector's heads and RoI ops are
left out: they do not depend on the backbone's checkpointing).

Every mode named ``... +cp`` is the mode before it with activation
checkpointing (the backbone's ``with_cp``); its row adds the ratios of its
memory growth and step time to that mode's (``vs_no_cp``): the issue's target
is <= 0.35x the memory at <= 1.4x the time.

Memory: one training step per mode and batch size, by default each in a
fresh subprocess on the CPU (the only honest CPU peak) and in this process
on CUDA (``--memory``): on the CPU the peak resident set size during the
step (the kernel's peak counter is reset just before it), on CUDA
``torch.cuda.max_memory_allocated`` (its counter reset just before it; the
allocator's cache does not count), minus the size before the step. The
distributed mode always runs in its own processes. Activation memory, exact
and free of the allocator's noise (:class:`SavedActivations`, in the same
step): the most bytes of saved-for-backward tensors held at once
(``saved_mb``; a checkpointed block holds its input only), plus, with
``with_cp``, what the largest block saves again when the backward pass
recomputes it (``recompute_mb``, :func:`largest_block_saved`); their sum is
``activation_mb``, an upper bound of the activations held at the peak
(docs/benchmarks.md). Step time: the single-process modes
built in one process and timed side by side by
:func:`mmvitdyn.benchmark.time_interleaved` (a warm-up step each, then
``--runs`` interleaved rounds of one step each, synchronised on a GPU;
medians, ratios to the dynamic pass as ratios of the medians;
``--runs 0``: memory only).
``--amp``: every step runs under ``torch.autocast`` in that dtype; on CUDA
through mmengine's ``AmpOptimWrapper`` (its loss scaler), on the CPU
(bfloat16, no loss scaling needed) through the plain ``OptimWrapper``.
"""
import mmvitdyn  # noqa: F401 (first: OpenMP's wait policy, before torch loads) isort: skip
import argparse
import json
import os
import socket
import subprocess
import sys
import weakref
from typing import Dict, List, NamedTuple, Optional, Sequence

import torch
import torch.distributed as dist
from benchmark_dense import det_models
from mmengine.registry import MODEL_WRAPPERS

from mmvitdyn.benchmark import (AMP_DTYPES, amp_context, clock_columns, format_table, iqr,
                                ratio_of_medians, run_conditions, run_fields, spread,
                                time_interleaved, timed_region, write_report)
from mmvitdyn.cli import add_timing_options, parse_timing_options
from mmvitdyn.engine.distributed import default_model_wrapper
from mmvitdyn.models import DyTViT
from mmvitdyn.settings import local_rank

# The suffix of a mode with activation checkpointing (the backbone's with_cp).
CP = ' +cp'


def with_checkpointing(modes: Dict[str, dict], names: Sequence[str]) -> Dict[str, dict]:
    """``modes`` with, right after each of ``names``, the same mode with ``with_cp``."""
    return {
        key: value
        for name, mode in modes.items()
        for key, value in [(name, mode)] +
        ([(name + CP, dict(mode, with_cp=True))] if name in names else [])
    }


# The training steps compared: DyTImageClassifier arguments, how the step runs,
# and whether it runs under the distributed wrapper (one process per rank).
TRAIN_MODES = with_checkpointing(
    {
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
    }, ['dyt two-pass', 'dyt one graph', 'dyt dynamic only'])
# ViTDet's backbone and pyramid on a stand-in task loss (plus the rate loss).
VITDET_MODES = with_checkpointing(
    {
        'dyt dynamic only': dict(dispatch='mlp', step='features'),
        'adaptformer': dict(dispatch=None, step='features'),
    }, ['dyt dynamic only', 'adaptformer'])
MODES = {'vit': TRAIN_MODES, 'vitdet': VITDET_MODES}
# The mode the others' memory and time are relative to.
BASE_MODE = 'dyt dynamic only'


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='DyT training step: peak memory and step time')
    parser.add_argument(
        '--model',
        default='vit',
        choices=list(MODES),
        help="'vit': DyTImageClassifier; 'vitdet': ViTDet's backbone and pyramid")
    parser.add_argument(
        '--modes', nargs='+', help='the modes to compare (default: all of --model\'s)')
    parser.add_argument(
        '--memory',
        choices=['subprocess', 'in-process'],
        help='where each step\'s memory is measured (default: subprocess on the CPU, '
        'in-process on CUDA)')
    parser.add_argument('--arch', default='base', choices=sorted(DyTViT.arch_zoo))
    parser.add_argument('--img-size', type=int, default=224)
    parser.add_argument('--patch-size', type=int, default=16)
    parser.add_argument('--adapter-dim', type=int, default=64, help='adapter bottleneck d')
    add_timing_options(parser, batch_sizes=[16], runs=3)
    parser.add_argument(
        '--threads',
        type=int,
        default=len(os.sched_getaffinity(0)),
        help='torch intra-op threads (default: the CPUs available; DDP: split among the ranks)')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--train-step-worker', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    modes = MODES[args.model]
    args.modes = args.modes or list(modes)
    unknown = [
        name for name in args.modes + [args.train_step_worker or BASE_MODE] if name not in modes
    ]
    if unknown or BASE_MODE not in args.modes:
        parser.error(f'--modes {args.modes}: --model {args.model} has the modes {list(modes)}, '
                     f'{BASE_MODE!r} among those given (the base of the ratios)')
    parse_timing_options(parser, args, min_runs=0)
    args.memory = args.memory or ('subprocess' if args.device.type == 'cpu' else 'in-process')
    return args


class TrainStep(NamedTuple):
    """A training mode's model, optimiser and batch; ``run()`` makes one step."""
    mode: dict
    model: torch.nn.Module  # the classifier (or its distributed wrapper), or ViTDet's pipeline
    optim_wrapper: object
    data: dict
    device: torch.device
    amp: Optional[str]  # --amp

    def run(self) -> None:
        with amp_context(self.device, self.amp):
            if self.mode['step'] == 'train_step':
                self.model.train_step(self.data, self.optim_wrapper)
                return
            if self.mode['step'] == 'loss':
                processed = self.model.data_preprocessor(self.data, True)
                losses = self.model.loss(processed['inputs'], processed['data_samples'])
                loss, _ = self.model.parse_losses(losses)
            else:  # 'features': ViTDet's stand-in task loss and the rate loss
                levels = self.model(self.data['inputs'])
                loss = sum(level.float().square().mean() for level in levels)
                if self.mode['dispatch'] is not None:
                    loss = loss + 2 * self.model.backbone.rate_loss()
            self.optim_wrapper.update_params(loss)


def build_classifier(args, mode: dict) -> torch.nn.Module:
    """``DyTImageClassifier`` of ``mode`` (100 classes) on a random frozen ViT."""
    from mmengine.registry import MODELS, init_default_scope
    init_default_scope('mmpretrain')
    return MODELS.build(
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
                with_cp=mode.get('with_cp', False),
                allow_random_frozen=True),  # time and memory do not depend on the weights
            head=dict(
                type='LinearClsHead',
                num_classes=100,
                in_channels=DyTViT.arch_zoo[args.arch]['embed_dims'])))


def build_vitdet(args, mode: dict) -> torch.nn.Module:
    """ViTDet's backbone and simple feature pyramid (``benchmark_dense.py``'s) of ``mode``."""
    backbone, parts = det_models(
        args.arch,
        args.img_size,
        dispatch=mode['dispatch'],
        with_cp=mode.get('with_cp', False),
        allow_random_frozen=True)
    backbone.init_weights()
    backbone.attach_objective('benchmark_train.py')
    return dict(parts)['backbone+neck']


def build_train_step(args, name: str, batch: int, device: torch.device) -> TrainStep:
    """The model of mode ``name`` of ``--model`` on ``device``, a random batch,
    AdamW; wrapped for data parallelism when a process group is initialised."""
    from mmengine.optim import AmpOptimWrapper, OptimWrapper
    from mmpretrain.structures import DataSample

    mode = MODES[args.model][name]
    torch.manual_seed(args.seed)
    model = (build_classifier if args.model == 'vit' else build_vitdet)(args, mode).to(device)
    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    if device.type == 'cuda' and args.amp is not None:
        optim_wrapper = AmpOptimWrapper(optimizer=optimizer, dtype=AMP_DTYPES[args.amp])
    else:
        optim_wrapper = OptimWrapper(optimizer)
    if mode['step'] == 'features':
        data = dict(inputs=torch.randn(batch, 3, args.img_size, args.img_size, device=device))
    else:
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


def num_ranks(name: str, device: torch.device, model: str = 'vit') -> int:
    """Processes of mode ``name`` of ``--model``: 1; the distributed mode: 2 gloo
    ranks on the CPU, a CUDA rank per GPU, at most 2."""
    if not MODES[model][name].get('ddp', False):
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


class _Saved:
    """A tensor autograd saved, as :class:`SavedActivations` hands it to the graph."""
    __slots__ = ('tensor', '__weakref__')

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor


class SavedActivations:
    """The bytes of the tensors autograd saves for the backward pass, held at once.

    Inside the context (:func:`torch.autograd.graph.saved_tensors_hooks`)
    every tensor an operation saves for its backward counts the bytes of its
    storage, once per storage, from when it is saved until the graph lets it
    go (after the backward of the node that saved it, or with the graph);
    the model's parameters do not count (they are held anyway). A
    checkpointed region saves its inputs here; its recomputation in the
    backward pass saves under the checkpoint's own hooks, not counted here
    (see :func:`largest_block_saved`).

    Args:
        model (nn.Module): The model whose parameters do not count.

    Attributes:
        live (int): Bytes held now.
        peak (int): The most bytes held at once.
        tag (object): Set from outside (e.g. the block running); ``saved``
            adds up the bytes saved under each tag.
        saved (dict): Tag -> bytes saved while it was set.
    """

    def __init__(self, model: torch.nn.Module):
        self.parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}
        self.holders: Dict[int, int] = {}  # storage address -> saved tensors holding it
        self.live = self.peak = 0
        self.tag = None
        self.saved: Dict[object, int] = {}
        self.hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)

    def __enter__(self) -> 'SavedActivations':
        self.hooks.__enter__()
        return self

    def __exit__(self, *exc_info) -> None:
        self.hooks.__exit__(*exc_info)

    def _pack(self, tensor: torch.Tensor):
        storage = tensor.untyped_storage()
        address, size = storage.data_ptr(), storage.nbytes()
        if address in self.parameters:
            return tensor
        if not self.holders.get(address):
            self.live += size
            self.peak = max(self.peak, self.live)
            self.saved[self.tag] = self.saved.get(self.tag, 0) + size
        self.holders[address] = self.holders.get(address, 0) + 1
        saved = _Saved(tensor)
        weakref.finalize(saved, self._release, address, size)
        return saved

    @staticmethod
    def _unpack(saved):
        return saved.tensor if isinstance(saved, _Saved) else saved

    def _release(self, address: int, size: int) -> None:
        self.holders[address] -= 1
        if not self.holders[address]:
            self.live -= size


def largest_block_saved(backbone: torch.nn.Module, images: torch.Tensor) -> int:
    """The most bytes one block of ``backbone`` saves for the backward pass: what a
    checkpointed block holds while the backward pass recomputes it.

    Measured by one forward of ``images`` (B, 3, H, W) in the backbone's mode,
    with gradients and without checkpointing, not back-propagated: the bytes
    :class:`SavedActivations` counts while each block runs.
    """
    counter = SavedActivations(backbone)
    handles = []
    for index, block in enumerate(backbone.blocks):
        handles += [
            block.register_forward_pre_hook(lambda *_, i=index: setattr(counter, 'tag', i)),
            block.register_forward_hook(lambda *_: setattr(counter, 'tag', None))
        ]
    with_cp, backbone.with_cp = backbone.with_cp, False
    try:
        with counter:
            backbone(images)
    finally:
        backbone.with_cp = with_cp
        for handle in handles:
            handle.remove()
    return max(size for tag, size in counter.saved.items() if tag is not None)


def measure_step(args, name: str, batch: int, device: torch.device) -> dict:
    """One training step of mode ``name`` on ``batch`` images in this process: its
    peak memory growth and peak (MB), its time (s), and its activations (MB,
    :class:`SavedActivations`; with ``with_cp`` also the recomputed block's)."""
    step = build_train_step(args, name, batch, device)
    if dist.is_initialized():
        dist.barrier()
    memory = PeakMemory(device)
    counter = SavedActivations(step.model)
    before = memory.reset()
    with timed_region(device) as seconds, counter:
        step.run()
    peak = memory.peak()
    figures = dict(
        growth_mb=(peak - before) / 2**20,
        peak_mb=peak / 2**20,
        seconds=seconds['wall'],
        saved_mb=counter.peak / 2**20)
    if step.mode.get('with_cp', False):
        backbone = getattr(step.model, 'module', step.model).backbone
        images = torch.randn(batch, 3, args.img_size, args.img_size, device=device)
        with amp_context(device, args.amp):
            figures['recompute_mb'] = largest_block_saved(backbone, images) / 2**20
    return figures


def train_step_worker(args) -> None:
    """One training step in this (fresh) process; print its figures as JSON."""
    name, device = args.train_step_worker, args.device
    if MODES[args.model][name].get('ddp', False):  # the caller set the rendezvous variables
        if device.type == 'cuda':
            device = torch.device('cuda', local_rank())
            torch.cuda.set_device(device)
        dist.init_process_group('gloo' if device.type == 'cpu' else 'nccl', init_method='env://')
    print(json.dumps(measure_step(args, name, args.batch_sizes[0], device)))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def run_train_step_workers(args, name: str, batch: int) -> dict:
    """Start the ``name`` worker (one process per rank) on ``batch`` images and wait;
    its figures (with several ranks the largest of each)."""
    ranks = num_ranks(name, args.device, args.model)
    passthrough = [
        '--model', args.model, '--arch', args.arch, '--img-size', args.img_size, '--patch-size',
        args.patch_size, '--adapter-dim', args.adapter_dim, '--threads',
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


def step_memory(args, name: str, batch: int) -> dict:
    """The figures of one step of mode ``name`` (see ``--memory``)."""
    if args.memory == 'in-process' and num_ranks(name, args.device, args.model) == 1:
        return dict(measure_step(args, name, batch, args.device), ranks=1)
    return run_train_step_workers(args, name, batch)


def ratio(growth: float, base: float) -> Optional[float]:
    """``growth / base``; None when ``base`` did not grow (the CPU allocator
    reused freed memory, in-process)."""
    return growth / base if base > 0 else None


def activation_mb(figures: dict) -> float:
    """The activations of a step's figures (MB): the saved tensors held at the peak,
    plus the largest block's when it is recomputed (``with_cp``)."""
    return figures['saved_mb'] + figures.get('recompute_mb', 0.)


def benchmark_batch(args, batch: int) -> List[dict]:
    """The rows of every mode of ``--modes`` at ``batch`` images per process."""
    memory = {name: step_memory(args, name, batch) for name in args.modes}
    times = {}
    if args.runs > 0:
        steps = {
            name: build_train_step(args, name, batch, args.device).run
            for name in args.modes if num_ranks(name, args.device, args.model) == 1
        }
        times = time_interleaved(steps, args.runs, args.device)
    clocks = clock_columns(args.device)
    base = {clock: spread(times[BASE_MODE][:, column]) for clock, column in clocks} if times else {}
    rows = []
    for name, figures in memory.items():
        mode = MODES[args.model][name]
        row = dict(
            model=name,
            backbone=args.model,
            **run_fields(batch, args.device, args.amp),
            with_cp=mode.get('with_cp', False),
            ranks=figures['ranks'],
            growth_mb=figures['growth_mb'],
            growth_vs_dynamic=ratio(figures['growth_mb'], memory[BASE_MODE]['growth_mb']),
            peak_mb=figures['peak_mb'],
            first_step_s=figures['seconds'])
        if 'saved_mb' in figures:
            row.update(
                saved_mb=figures['saved_mb'],
                recompute_mb=figures.get('recompute_mb'),
                activation_mb=activation_mb(figures))
        plain = name[:-len(CP)] if row['with_cp'] else None
        if plain in memory:
            row['growth_vs_no_cp'] = ratio(figures['growth_mb'], memory[plain]['growth_mb'])
            if 'saved_mb' in figures:
                row['activation_vs_no_cp'] = ratio(row['activation_mb'],
                                                   activation_mb(memory[plain]))
        if name in times:
            step = {clock: spread(times[name][:, column]) for clock, column in clocks}
            row.update(step_s=step[''], step_vs_dynamic=ratio_of_medians(step[''], base['']))
            if plain in times:
                row['step_vs_no_cp'] = ratio_of_medians(step[''], spread(times[plain][:, 0]))
            if args.device.type == 'cpu':
                row.update(
                    cpu_step_s=step['cpu_'],
                    cpu_vs_dynamic=ratio_of_medians(step['cpu_'], base['cpu_']))
        rows.append(row)
    return rows


COLUMNS = [
    ('batch', 'batch_size', 'd'),
    ('step', 'model', 's'),
    ('ranks', 'ranks', 'd'),
    ('growth MB', 'growth_mb', '.0f'),
    ('vs dynamic only', 'growth_vs_dynamic', '.2f'),
    ('vs no cp', 'growth_vs_no_cp', '.2f'),
    ('peak MB', 'peak_mb', '.0f'),
    ('1st step s', 'first_step_s', '.2f'),
    ('| act. MB', 'activation_mb', '.0f'),
    ('recomp. MB', 'recompute_mb', '.0f'),
    ('vs no cp', 'activation_vs_no_cp', '.2f'),
    ('| step s', 'step_s.median', '.3f'),
    ('step s q1-q3', iqr('step_s', '.3f'), 's'),
    ('vs dynamic only', 'step_vs_dynamic', '.3f'),
    ('vs no cp', 'step_vs_no_cp', '.3f'),
]
# On the CPU: step time by process CPU time too.
CPU_COLUMNS = [('CPU s', 'cpu_step_s.median', '.3f'), ('vs dynamic only', 'cpu_vs_dynamic', '.3f')]
# The models --model names, for the table's title.
TITLES = {'vit': 'DyTImageClassifier, ViT', 'vitdet': "ViTDet's backbone and pyramid, ViT"}


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.train_step_worker:
        train_step_worker(args)
        return
    rows = [row for batch in args.batch_sizes for row in benchmark_batch(args, batch)]
    memory = 'peak RSS' if args.device.type == 'cpu' else 'peak max_memory_allocated'
    where = 'a fresh process each' if args.memory == 'subprocess' else 'in this process'
    print(f'Training step, {TITLES[args.model]} {args.arch} {args.img_size}px, '
          f'{run_conditions(args.device, args.amp)}: {memory} growth over the first step '
          f'({where}), '
          'and its activations (act.: saved-for-backward tensors held at the peak, with the '
          'recomputed block\'s, "recomp."), then the single-process steps interleaved in one '
          f'process, medians of {args.runs} rounds (ratios: of the medians; '
          '"+cp": with_cp, "vs no cp": to the step without it)')
    print(format_table(rows, COLUMNS + (CPU_COLUMNS if args.device.type == 'cpu' else [])))
    if args.json:
        write_report(args.json, 'benchmark_train.py', vars(args), rows, args.device)


if __name__ == '__main__':
    main()
