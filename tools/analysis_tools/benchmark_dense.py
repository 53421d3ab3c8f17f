"""Inference speed of DyT's dense backbones, dense (every token) vs DyT, side by side.

    python tools/analysis_tools/benchmark_dense.py [--task det seg seg-pyramid]
        [--backbone-only] [--arch base] [--det-size 1024] [--seg-size 512] [--rate 0.5] [--runs 5]
        [--threads N] [--batch-sizes 1] [--device cpu|cuda|cuda:N] [--amp fp16|bf16]
        [--backends eager [compile onnx]] [--onnx-providers NAME [NAME ...]] [--json OUT]

Detection (det): the windowed ViT of ViTDet (DyTViTDet, MLP dispatch,
adapter d = 128) and its simple feature pyramid. Segmentation, the two
UperNet variants side by side: the global ViT (DyTViT, MLP dispatch, adapter
d = 64, blocks 3/5/7/11 out) with mmseg's multi-level neck (seg, as
configs/dyt/upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py), and with the
public code's pyramid inside the backbone and no final norm (seg-pyramid, as
upernet_vit-b-p16-dyt_d64_pyramid_8xb2-160k_ade20k-512x512.py; one row, as that
backbone alone feeds the head). ``--backbone-only`` times the backbones
without the necks (and so imports no mmseg, whose import needs mmcv's
compiled ops). Weights are random; every
dispatcher's gate bias is calibrated on the benchmark image so that
``--rate`` of its patch tokens are active in evaluation. The dense model is
the same model in complete mode (every token through every block part,
adapters included), so the difference is exactly the skipped MLP work.

Dense and DyT are timed side by side in evaluation mode (DyT: the packed
path) under ``torch.inference_mode()`` (and ``torch.autocast`` with
``--amp``) by :func:`mmvitdyn.benchmark.time_interleaved`: medians
over ``--runs`` interleaved rounds, synchronised on a GPU; the speed-up is
the ratio of the median images/s shown. FLOPs per image (one multiply-add = one
FLOP, attention matmuls included) are counted by tracing that same forward
in fp32, so the DyT count is that of the active tokens. The target: speed-up
>= 0.85 x FLOP ratio. ``--json OUT`` writes the rows.

Backends (``--backends``, ``--onnx-providers``: as benchmark.py's, through
:class:`mmvitdyn.benchmark.Backends`): every timed part runs under each, all in
the same rounds; under ``onnx`` the dense model is the part exported in
complete mode, DyT the part exported as it runs (with ``--backbone-only`` the
backbone, its outputs the tuple of feature maps). A row's speed-up is over
dense under the same backend, ``vs_eager`` its images/s over the same model's
in eager.
"""
import mmvitdyn  # noqa: F401 (first: OpenMP's wait policy, before torch loads) isort: skip
import argparse
import tempfile
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch
from mmengine.logging import MMLogger
from torch import nn

from mmvitdyn.analysis import calibrate_gates, count_flops
from mmvitdyn.benchmark import (Backends, backend_rows, format_table, iqr, run_conditions,
                                time_backends, write_report)
from mmvitdyn.cli import (add_backend_options, add_timing_options, parse_backend_options,
                          parse_timing_options)
from mmvitdyn.models import DyTViT, DyTViTDet, SimpleFPN

TARGET = 0.85


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument(
        '--task', nargs='+', choices=list(TASKS), default=list(TASKS), help='models to time')
    parser.add_argument(
        '--backbone-only', action='store_true', help='time the backbones without the necks')
    parser.add_argument('--arch', default='base', help="ViT arch: 'tiny', 'small', 'base', 'large'")
    parser.add_argument('--det-size', type=int, default=1024, help='detection input side')
    parser.add_argument('--seg-size', type=int, default=512, help='segmentation input side')
    parser.add_argument('--rate', type=float, default=0.5, help='activation rate to calibrate to')
    add_timing_options(parser, batch_sizes=[1], runs=5)
    parser.add_argument(
        '--threads', type=int, help='torch (and ONNX Runtime) threads (default: their choice)')
    add_backend_options(parser)
    args = parser.parse_args(argv)
    for name in ('det_size', 'seg_size'):
        if getattr(args, name) % 16:
            parser.error(f'--{name.replace("_", "-")} must be a multiple of the patch size 16')
    parse_timing_options(parser, args)
    parse_backend_options(parser, args)
    return args


def every_quarter(num_layers: int) -> Tuple[int, ...]:
    """The last block of each quarter: (2, 5, 8, 11) for 12 blocks."""
    return tuple(range(num_layers // 4 - 1, num_layers, num_layers // 4))


class CompleteMode(nn.Module):
    """``model`` run with every token through every block part of ``backbone`` (a
    part of ``model``, in its ``complete_mode``): the dense model, for any backend."""

    def __init__(self, model: nn.Module, backbone: nn.Module):
        super().__init__()
        self.model = model
        self.complete_mode = backbone.complete_mode  # a method: the backbone stays model's
        self.train(model.training)

    def forward(self, x: torch.Tensor):
        with self.complete_mode():
            return self.model(x)


class Pipeline(nn.Module):
    """Backbone, then neck."""

    def __init__(self, backbone: nn.Module, neck: nn.Module):
        super().__init__()
        self.backbone, self.neck = backbone, neck

    def forward(self, x: torch.Tensor):
        return self.neck(self.backbone(x))


def det_models(arch: str,
               size: int,
               necks: bool = True,
               **kwargs) -> Tuple[nn.Module, List[Tuple[str, nn.Module]]]:
    """ViTDet's backbone (as configs/dyt/mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_coco-1024x1024.py;
    ``kwargs``: other arguments of :class:`DyTViTDet`), and the timed parts: it
    alone and (``necks``) with its simple feature pyramid."""
    num_layers = DyTViTDet._parse_arch(arch)['num_layers']
    backbone = DyTViTDet(
        arch=arch,
        img_size=224,
        window_size=14,
        global_indices=every_quarter(num_layers),
        input_size=size,
        adapter_cfg=dict(bottleneck=128),
        **kwargs)
    if not necks:
        return backbone, [('backbone', backbone)]
    return backbone, [('backbone', backbone),
                      ('backbone+neck', Pipeline(backbone, SimpleFPN(backbone.embed_dims, 256)))]


def seg_backbone(arch: str, **kwargs) -> DyTViT:
    """UperNet's DyT ViT (as configs/_base_/models/upernet_dyt-vit-b-d64_*.py)."""
    num_layers = DyTViT._parse_arch(arch)['num_layers']
    out_indices = tuple(i * num_layers // 12 for i in (3, 5, 7, 11))
    return DyTViT(
        arch=arch,
        img_size=224,
        out_indices=out_indices,
        out_type='featmap',
        adapter_cfg=dict(bottleneck=64),
        **kwargs)


def seg_models(arch: str,
               size: int,
               necks: bool = True) -> Tuple[nn.Module, List[Tuple[str, nn.Module]]]:
    """The mmseg-style UperNet's backbone, and the timed parts: it alone and
    (``necks``) with mmseg's multi-level neck."""
    backbone = seg_backbone(arch)
    if not necks:
        return backbone, [('backbone', backbone)]
    from mmseg.models.necks import MultiLevelNeck
    dims = backbone.embed_dims
    neck = MultiLevelNeck([dims] * 4, dims, scales=[4, 2, 1, 0.5])
    return backbone, [('backbone', backbone), ('backbone+neck', Pipeline(backbone, neck))]


def seg_pyramid_models(arch: str,
                       size: int,
                       necks: bool = True) -> Tuple[nn.Module, List[Tuple[str, nn.Module]]]:
    """The public-code UperNet's backbone, the pyramid inside it, and the timed
    part: it (with or without ``necks``: it has none)."""
    backbone = seg_backbone(arch, final_norm=False, pyramid=dict(type='RescalePyramid'))
    return backbone, [('backbone+pyramid', backbone)]


TASKS: Dict[str, Callable[[str, int, bool], Tuple[nn.Module, List[Tuple[str, nn.Module]]]]] = {
    'det': det_models,
    'seg': seg_models,
    'seg-pyramid': seg_pyramid_models,
}


def benchmark(task: str,
              arch: str,
              size: int,
              rate: float,
              runs: int,
              backends: Backends,
              names: Sequence[str] = ('eager', ),
              batch: int = 1,
              device: torch.device = torch.device('cpu'),
              amp: Optional[str] = None,
              necks: bool = True) -> List[dict]:
    """Rows of ``task``'s timed parts (the backbone alone unless ``necks``),
    backend by backend (``names``, made by ``backends``), dense then DyT (with
    ``meets_target``), at ``batch`` random images (the dispatchers calibrated
    on them to ``rate``); see :func:`~mmvitdyn.benchmark.backend_rows` for the
    figures."""
    torch.manual_seed(0)
    backbone, parts = TASKS[task](arch, size, necks)
    backbone.init_weights()
    for _, model in parts:
        model.to(device).eval()
    images = torch.randn(batch, 3, size, size).to(device)
    calibrate_gates(backbone, images, rate)
    with torch.inference_mode():
        backbone(images)
    act_rate = backbone.activation_rates()['act_rate']
    rows = []
    for part, model in parts:
        models = {'dense': CompleteMode(model, backbone), 'DyT': model}
        flops = {mode: count_flops(m, images) / batch for mode, m in models.items()}
        timed = {mode: (m, images) for mode, m in models.items()}
        samples = time_backends(backends, names, timed, runs, device, amp=amp)
        for row in backend_rows(samples, 'dense', batch, device, amp, flops):
            row.update(
                task=task,
                input_size=size,
                part=part,
                act_rate=act_rate if row['model'] == 'DyT' else 1.0)
            if row['model'] == 'DyT':
                row['meets_target'] = row['speedup_per_flop_ratio'] >= TARGET
            rows.append(row)
    return rows


VERDICTS = {True: 'ok', False: 'below'}  # of a DyT row's meets_target
COLUMNS = [
    ('task', 'task', 's'),
    ('input', 'input_size', 'd'),
    ('part', 'part', 's'),
    ('batch', 'batch_size', 'd'),
    ('model', 'model', 's'),
    ('backend', 'backend', 's'),
    ('act.', 'act_rate', '.2f'),
    ('ms/batch', lambda row: 1e3 * row['batch_size'] / row['images_per_s']['median'], '.1f'),
    ('img/s', 'images_per_s.median', '.2f'),
    ('img/s q1-q3', iqr('images_per_s', '.2f'), 's'),
    ('speed-up', 'speedup', '.3f'),
    ('GFLOPs', 'gflops', '.3f'),
    ('FLOP ratio', 'flop_ratio', '.3f'),
    ('speed-up/FLOP ratio', 'speedup_per_flop_ratio', '.3f'),
    (f'target {TARGET}', lambda row: VERDICTS.get(row.get('meets_target')), 's'),
    ('vs eager', 'vs_eager', '.3f'),
]


def main(argv=None):
    args = parse_args(argv)
    MMLogger.get_instance('benchmark_dense', log_level='WARNING')  # no per-weight init log
    if args.threads:
        torch.set_num_threads(args.threads)
    rows = []
    with tempfile.TemporaryDirectory() as onnx_dir:
        backends = Backends(args.threads, onnx_dir, args.onnx_providers)
        for task in args.task:
            size = args.det_size if task == 'det' else args.seg_size
            for batch in args.batch_sizes:
                rows += benchmark(task, args.arch, size, args.rate, args.runs, backends,
                                  args.backends, batch, args.device, args.amp,
                                  not args.backbone_only)
    print(f'arch {args.arch}, rate {args.rate}, '
          f'{run_conditions(args.device, args.amp, args.runs)}')
    columns = COLUMNS
    if args.backends == ['eager']:
        columns = [c for c in columns if c[0] not in ('backend', 'vs eager')]
    print(format_table(rows, columns))
    if args.json:
        write_report(args.json, 'benchmark_dense.py', vars(args), rows, args.device)


if __name__ == '__main__':
    main()
