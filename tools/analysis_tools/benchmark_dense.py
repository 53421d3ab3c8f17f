"""Inference speed of DyT's dense backbones, dense (every token) vs DyT, side by side.

    python tools/analysis_tools/benchmark_dense.py [--task det seg seg-pyramid]
        [--arch base] [--det-size 1024] [--seg-size 512] [--rate 0.5] [--runs 5]
        [--threads N]

Detection (det): the windowed ViT of ViTDet (DyTViTDet, MLP dispatch,
adapter d = 128) and its simple feature pyramid. Segmentation, the two
UperNet variants side by side: the global ViT (DyTViT, MLP dispatch, adapter
d = 64, blocks 3/5/7/11 out) with mmseg's multi-level neck (seg, as
configs/dyt/upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py), and with the
public code's pyramid inside the backbone and no final norm (seg-pyramid, as
upernet_vit-b-p16-dyt_d64_pyramid_8xb2-160k_ade20k-512x512.py; one row, as that
backbone alone feeds the head). Weights are random; every
dispatcher's gate bias is calibrated on the benchmark image so that
``--rate`` of its patch tokens are active in evaluation. The dense model is
the same model in complete mode (every token through every block part,
adapters included), so the difference is exactly the skipped MLP work.

Times are medians over ``--runs`` interleaved runs, batch 1, evaluation
mode (DyT: the packed path). FLOPs (one multiply-add = one FLOP, attention
matmuls included) are counted by tracing that same forward, so the DyT count
is that of the active tokens. The target: speedup >= 0.85 x FLOP ratio.
"""
import argparse
import statistics
import time
from contextlib import nullcontext
from typing import Callable, Dict, List, Tuple

import torch
from mmengine.logging import MMLogger
from mmseg.models.necks import MultiLevelNeck
from torch import nn

from mmvitdyn.analysis import calibrate_gates, flop_analyzer
from mmvitdyn.models import DyTViT, DyTViTDet, SimpleFPN

TARGET = 0.85


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument(
        '--task', nargs='+', choices=list(TASKS), default=list(TASKS), help='models to time')
    parser.add_argument('--arch', default='base', help="ViT arch: 'tiny', 'small', 'base', 'large'")
    parser.add_argument('--det-size', type=int, default=1024, help='detection input side')
    parser.add_argument('--seg-size', type=int, default=512, help='segmentation input side')
    parser.add_argument('--rate', type=float, default=0.5, help='activation rate to calibrate to')
    parser.add_argument('--runs', type=int, default=5, help='timed runs per model')
    parser.add_argument('--threads', type=int, help='torch threads (default: torch\'s choice)')
    args = parser.parse_args(argv)
    for name in ('det_size', 'seg_size'):
        if getattr(args, name) % 16:
            parser.error(f'--{name.replace("_", "-")} must be a multiple of the patch size 16')
    if args.runs < 1:
        parser.error('--runs must be >= 1')
    return args


def every_quarter(num_layers: int) -> Tuple[int, ...]:
    """The last block of each quarter: (2, 5, 8, 11) for 12 blocks."""
    return tuple(range(num_layers // 4 - 1, num_layers, num_layers // 4))


class Pipeline(nn.Module):
    """Backbone, then neck."""

    def __init__(self, backbone: nn.Module, neck: nn.Module):
        super().__init__()
        self.backbone, self.neck = backbone, neck

    def forward(self, x: torch.Tensor):
        return self.neck(self.backbone(x))


def det_models(arch: str, size: int) -> Tuple[nn.Module, List[Tuple[str, nn.Module]]]:
    """ViTDet's backbone (as configs/dyt/mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_coco-1024x1024.py),
    and the timed parts: it alone and with its simple feature pyramid."""
    num_layers = DyTViTDet._parse_arch(arch)['num_layers']
    backbone = DyTViTDet(
        arch=arch,
        img_size=224,
        window_size=14,
        global_indices=every_quarter(num_layers),
        input_size=size,
        adapter_cfg=dict(bottleneck=128))
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


def seg_models(arch: str, size: int) -> Tuple[nn.Module, List[Tuple[str, nn.Module]]]:
    """The mmseg-style UperNet's backbone, and the timed parts: it alone and with
    the multi-level neck."""
    backbone = seg_backbone(arch)
    dims = backbone.embed_dims
    neck = MultiLevelNeck([dims] * 4, dims, scales=[4, 2, 1, 0.5])
    return backbone, [('backbone', backbone), ('backbone+neck', Pipeline(backbone, neck))]


def seg_pyramid_models(arch: str, size: int) -> Tuple[nn.Module, List[Tuple[str, nn.Module]]]:
    """The public-code UperNet's backbone, the pyramid inside it, and the timed part: it."""
    backbone = seg_backbone(arch, final_norm=False, pyramid=dict(type='RescalePyramid'))
    return backbone, [('backbone+pyramid', backbone)]


TASKS: Dict[str, Callable[[str, int], Tuple[nn.Module, List[Tuple[str, nn.Module]]]]] = {
    'det': det_models,
    'seg': seg_models,
    'seg-pyramid': seg_pyramid_models,
}


def gflops(model: nn.Module, image: torch.Tensor) -> float:
    with torch.no_grad():
        return flop_analyzer(model, (image, )).total() / 1e9


def median_seconds(fns: Dict[str, Callable[[], object]], runs: int) -> Dict[str, float]:
    """Median wall time of each function, runs interleaved (after one warm-up each)."""
    times: Dict[str, List[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(runs):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def benchmark(task: str, arch: str, size: int, rate: float, runs: int) -> List[dict]:
    torch.manual_seed(0)
    backbone, parts = TASKS[task](arch, size)
    backbone.init_weights()
    for _, model in parts:
        model.eval()
    image = torch.randn(1, 3, size, size)
    calibrate_gates(backbone, image, rate)
    with torch.inference_mode():
        backbone(image)
    act_rate = backbone.activation_rates()['act_rate']
    modes = {'dense': backbone.complete_mode, 'DyT': nullcontext}
    rows = []
    for part, model in parts:
        flops = {}
        for mode, context in modes.items():
            with context():
                flops[mode] = gflops(model, image)

        def run(context, model=model):
            with torch.inference_mode(), context():
                model(image)

        runs_of = {mode: (lambda c=context: run(c)) for mode, context in modes.items()}
        seconds = median_seconds(runs_of, runs)
        rows.append(
            dict(task=task, size=size, part=part, act_rate=act_rate, flops=flops, seconds=seconds))
    return rows


def print_table(rows: List[dict]) -> None:
    header = (f'{"task":11} {"input":>9} {"part":16} {"act":>5} {"dense ms":>9} {"DyT ms":>8} '
              f'{"speedup":>7} {"dense GF":>9} {"DyT GF":>8} {"FLOP ratio":>10} '
              f'{"speedup/FLOP ratio":>18}')
    print(header)
    print('-' * len(header))
    for row in rows:
        speedup = row['seconds']['dense'] / row['seconds']['DyT']
        flop_ratio = row['flops']['dense'] / row['flops']['DyT']
        verdict = 'ok' if speedup >= TARGET * flop_ratio else f'below {TARGET}'
        print(f'{row["task"]:11} {row["size"]:>4}x{row["size"]:<4} {row["part"]:16} '
              f'{row["act_rate"]:5.2f} {row["seconds"]["dense"] * 1e3:9.1f} '
              f'{row["seconds"]["DyT"] * 1e3:8.1f} {speedup:7.3f} {row["flops"]["dense"]:9.2f} '
              f'{row["flops"]["DyT"]:8.2f} {flop_ratio:10.3f} '
              f'{speedup / flop_ratio:11.3f} ({verdict})')


def main(argv=None):
    args = parse_args(argv)
    MMLogger.get_instance('benchmark_dense', log_level='WARNING')  # no per-weight init log
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f'arch {args.arch}, batch 1, rate {args.rate}, median of {args.runs} runs, '
          f'{torch.get_num_threads()} threads')
    rows = []
    for task in args.task:
        size = args.det_size if task == 'det' else args.seg_size
        rows += benchmark(task, args.arch, size, args.rate, args.runs)
    print_table(rows)


if __name__ == '__main__':
    main()
