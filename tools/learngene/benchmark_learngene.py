"""Time building a learngene against plain inference of the same model.

    python tools/learngene/benchmark_learngene.py [--num-images 256]
        [--batch-sizes 64] [--arch base] [--img-size 224] [--patch-size 16]
        [--eps 10] [--runs 1] [--device cpu|cuda|cuda:N] [--amp fp16|bf16]
        [--json OUT] [--max-ratio 1.3]

A ViT (random weights; ViT-B/16 at 224 by default) runs over the same random
images, in batches of each ``--batch-sizes``, twice: a plain inference pass,
and the stages of ``build_learngene`` (MAD during the forward pass;
clustering, FFN grouping and extraction; writing the file), the two timed
side by side by :func:`mmvitdyn.benchmark.time_interleaved` after a
short warm-up (``--runs`` interleaved rounds, synchronised on a GPU), each
stage by :func:`~mmvitdyn.benchmark.timed_region`. Prints the seconds
of each and the ratio build / inference (of the two median seconds);
with --max-ratio the exit status is 1 when a ratio is above it.
"""
import mmvitdyn  # noqa: F401 (first: OpenMP's wait policy, before torch loads) isort: skip
import argparse
import os
import sys
import tempfile
from typing import Dict, List

import torch

from mmvitdyn.benchmark import (amp_context, format_table, iqr, ratio_of_medians, run_conditions,
                                run_fields, spread, time_interleaved, timed_region, write_report)
from mmvitdyn.cli import add_timing_options, parse_timing_options
from mmvitdyn.learngene import cluster_heads, condense, record_attention_distance
from mmvitdyn.models import ViT

# The build's stages, in order.
STAGES = ('mad', 'condense', 'write')


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Benchmark the learngene build')
    parser.add_argument('--num-images', type=int, default=256)
    parser.add_argument('--arch', default='base', help="a ViT arch_zoo key, e.g. 'base', 'tiny'")
    parser.add_argument('--img-size', type=int, default=224)
    parser.add_argument('--patch-size', type=int, default=16)
    parser.add_argument('--eps', type=float, default=10.)
    add_timing_options(parser, batch_sizes=[64], runs=1)
    parser.add_argument('--max-ratio', type=float, help='fail (exit 1) above this ratio')
    args = parser.parse_args(argv)
    parse_timing_options(parser, args)
    return args


def benchmark_batch(args, model: ViT, images: torch.Tensor, batch_size: int,
                    out: str) -> List[dict]:
    """The plain inference and build rows of ``images`` in batches of ``batch_size``."""
    device = args.device
    batches = [b.to(device) for b in images.split(batch_size)]
    with torch.no_grad(), amp_context(device, args.amp):  # kernels, allocator, scikit-learn
        model(batches[0][:2])
    cluster_heads(torch.rand(2, 3), eps=args.eps)
    stages: Dict[str, List[float]] = {stage: [] for stage in STAGES}
    built = {}

    def inference():
        with torch.no_grad():
            for batch in batches:
                model(batch)

    def build():
        with timed_region(device) as seconds:
            recorder = record_attention_distance(model, batches)
            mad = recorder.mean()
        stages['mad'].append(seconds['wall'])
        with timed_region(device) as seconds:
            built['learngene'] = condense(model, mad, recorder.num_images, eps=args.eps)
        stages['condense'].append(seconds['wall'])
        with timed_region(device) as seconds:
            built['learngene'].save(out)
        stages['write'].append(seconds['wall'])

    samples = time_interleaved(
        dict(inference=inference, build=build), args.runs, device, warmup=0, amp=args.amp)
    common = run_fields(batch_size, device, args.amp)
    learngene = built['learngene']
    inference_seconds, build_seconds = (
        spread(samples[name][:, 0]) for name in ('inference', 'build'))
    return [
        dict(
            common,
            model='plain inference',
            seconds=inference_seconds,
            images_per_s=spread(len(images) / samples['inference'][:, 0])),
        dict(
            common,
            model='learngene build',
            seconds=build_seconds,
            images_per_s=spread(len(images) / samples['build'][:, 0]),
            stages={stage: spread(torch.tensor(stages[stage]))
                    for stage in STAGES},
            ratio=ratio_of_medians(build_seconds, inference_seconds),
            centroids=sum(learngene.num_centroids),
            ffns=len(learngene.ffn_groups),
            file_mib=os.path.getsize(out) / 2**20)
    ]


COLUMNS = [
    ('batch', 'batch_size', 'd'),
    ('pass', 'model', 's'),
    ('s', 'seconds.median', '.3f'),
    ('s q1-q3', iqr('seconds', '.3f'), 's'),
    ('img/s', 'images_per_s.median', '.1f'),
    *((f'{stage} s', f'stages.{stage}.median', '.3f') for stage in STAGES),
    ('build / inference', 'ratio', '.3f'),
    ('centroids', 'centroids', 'd'),
    ('FFNs', 'ffns', 'd'),
    ('file MiB', 'file_mib', '.1f'),
]


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(0)
    # PyTorch's default initialisation: random weights are all the timing needs.
    model = ViT(
        arch=args.arch, img_size=args.img_size, patch_size=args.patch_size).to(args.device).eval()
    images = torch.randn(args.num_images, 3, args.img_size, args.img_size)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [
            row for batch_size in args.batch_sizes for row in benchmark_batch(
                args, model, images, batch_size, os.path.join(tmp, 'learngene.pth'))
        ]
    print(f'ViT {args.arch}/{args.patch_size} at {args.img_size}, {args.num_images} images, '
          f'{run_conditions(args.device, args.amp, args.runs)} (mad: forward pass + MAD; '
          'condense: clustering, FFN groups, extraction)')
    print(format_table(rows, COLUMNS))
    if args.json:
        write_report(args.json, 'benchmark_learngene.py', vars(args), rows, args.device)
    ratios = [row['ratio'] for row in rows if 'ratio' in row]
    if args.max_ratio is not None and max(ratios) > args.max_ratio:
        print(f'ratio build / inference {max(ratios):.3f} is above --max-ratio {args.max_ratio}')
        sys.exit(1)


if __name__ == '__main__':
    main()
