"""Time building a learngene against plain inference of the same model.

    python tools/learngene/benchmark_learngene.py [--num-images 256]
        [--batch-size 64] [--arch base] [--img-size 224] [--patch-size 16]
        [--eps 10] [--device cuda|cpu] [--max-ratio 1.3]

A ViT (random weights; ViT-B/16 at 224 by default) runs over the same random
images twice: a plain inference pass, and the stages of ``build_learngene``
(MAD during the forward pass; clustering, FFN grouping and extraction;
writing the file), each timed here. Prints the seconds of each stage and the
ratio build / inference; with --max-ratio the exit status is 1 when the
ratio is above it.
"""
import argparse
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from typing import Dict

import torch

import mmvitdyn  # noqa: F401
from mmvitdyn.learngene import cluster_heads, condense, record_attention_distance
from mmvitdyn.models import ViT


@contextmanager
def timed(timings: Dict[str, float], stage: str, device: torch.device):
    """Add the wall time of the block to ``timings[stage]`` (GPU work included)."""
    sync = torch.cuda.synchronize if device.type == 'cuda' else (lambda: None)
    sync()
    start = time.perf_counter()
    yield
    sync()
    timings[stage] = timings.get(stage, 0.) + time.perf_counter() - start


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Benchmark the learngene build')
    parser.add_argument('--num-images', type=int, default=256)
    parser.add_argument('--batch-size', type=int, default=64)
    parser.add_argument('--arch', default='base', help="a ViT arch_zoo key, e.g. 'base', 'tiny'")
    parser.add_argument('--img-size', type=int, default=224)
    parser.add_argument('--patch-size', type=int, default=16)
    parser.add_argument('--eps', type=float, default=10.)
    parser.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')
    parser.add_argument('--max-ratio', type=float, help='fail (exit 1) above this ratio')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    device = torch.device(args.device)
    torch.manual_seed(0)
    # PyTorch's default initialisation: random weights are all the timing needs.
    model = ViT(
        arch=args.arch, img_size=args.img_size, patch_size=args.patch_size).to(device).eval()
    images = torch.randn(args.num_images, 3, args.img_size, args.img_size)
    batches = [b.to(device) for b in images.split(args.batch_size)]
    with torch.no_grad():  # warm-up: kernels, allocator, scikit-learn import
        model(batches[0][:2])
        cluster_heads(torch.rand(2, 3), eps=args.eps)

    timings = {}
    with torch.no_grad(), timed(timings, 'inference', device):
        for batch in batches:
            model(batch)
    # The stages of build_learngene, timed one by one.
    stages = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'learngene.pth')
        with timed(stages, 'mad', device):
            recorder = record_attention_distance(model, batches)
            mad = recorder.mean()
        with timed(stages, 'condense', device):
            learngene = condense(model, mad, recorder.num_images, eps=args.eps)
        with timed(stages, 'write', device):
            learngene.save(out)
        size = os.path.getsize(out)

    inference = timings['inference']
    total = sum(stages.values())
    ratio = total / inference
    print(f'ViT {args.arch}/{args.patch_size} at {args.img_size}, {args.num_images} images, '
          f'batch {args.batch_size}, {device}')
    print(f'  plain inference        {inference:8.3f} s')
    for stage, seconds in stages.items():
        note = dict(
            mad=' (forward pass + MAD)',
            condense=' (clustering, FFN groups, extraction)').get(stage, '')
        print(f'  learngene {stage:<12} {seconds:8.3f} s{note}')
    print(f'  learngene total        {total:8.3f} s  ({sum(learngene.num_centroids)} centroids, '
          f'{len(learngene.ffn_groups)} FFNs, file {size / 2**20:.1f} MiB)')
    print(f'  ratio build / inference = {ratio:.3f}' +
          (f' (limit {args.max_ratio})' if args.max_ratio else ''))
    if args.max_ratio is not None and ratio > args.max_ratio:
        sys.exit(1)


if __name__ == '__main__':
    main()
