"""Condense a trained ancestry into a Cluster-Learngene learngene.

    python tools/learngene/build_learngene.py CONFIG CHECKPOINT --out FILE
        [--data DIR] [--num-images 1000] [--batch-size 32]
        [--method dbscan|kmeans] [--eps 10] [--min-hds 1] [--k K [K ...]]
        [--centroid select|average] [--no-ffn-clustering | --ffn-groups 5-8 ...]
        [--plot FILE.png] [--device cpu|cuda] [--seed 0] [--cfg-options k=v ...]

Images are preprocessed exactly as the config evaluates: its test pipeline
and its model's data_preprocessor (mean/std). ``--data DIR`` reads image
files under DIR (a seeded sample of ``--num-images``); without it the
config's val dataset is used. The checkpoint may be a classifier checkpoint
(``backbone.*`` keys) or a bare backbone: for a ViT in any layout
``mmvitdyn.checkpoint.load_pretrained`` reads (timm/DeiT, mmpretrain,
JAX), for mmpretrain's SwinTransformer and LeViT in their own keys. These
two are condensed stage by stage (MAD inside a Swin's windows, on each
LeViT stage's grid; see ``mmvitdyn.learngene.ancestries``; no explicit
--ffn-groups).
"""
import mmvitdyn  # noqa: F401 (first: OpenMP's wait policy, before torch loads) isort: skip
import argparse
import os.path as osp
import random
import time
from pathlib import Path

import torch
from mmengine.config import DictAction
from mmengine.dataset import Compose, pseudo_collate
from mmengine.logging import MMLogger
from mmengine.registry import DATASETS
from mmengine.utils import ProgressBar
from torch import nn

from mmvitdyn.apis import init_model
from mmvitdyn.checkpoint import (group_keys, is_local_path, load_pretrained, load_state_dict_file,
                                 strip_prefix, trusted_checkpoints, trusted_names)
from mmvitdyn.cli import add_trust_option
from mmvitdyn.datasets import check_data_roots
from mmvitdyn.engine import SetupError, config_inputs, load_config
from mmvitdyn.learngene import ancestry_for, build_learngene, plot_mad
from mmvitdyn.learngene.head_clustering import check_clustering_args
from mmvitdyn.models import ViT
from mmvitdyn.utils import OutputIsInputError, refuse_overwriting_inputs

IMAGE_SUFFIXES = {'.jpg', '.jpeg', '.png', '.bmp', '.webp', '.tif', '.tiff'}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Build a Cluster-Learngene learngene')
    parser.add_argument('config', help='config of the ancestry model')
    parser.add_argument('checkpoint', help='checkpoint of the trained ancestry')
    parser.add_argument('--out', required=True, help='learngene file to write')
    parser.add_argument('--data', help="image folder (default: the config's val dataset)")
    parser.add_argument('--num-images', type=int, default=1000, help='images to average MAD over')
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--method', choices=['dbscan', 'kmeans'], default='dbscan')
    parser.add_argument('--eps', type=float, default=10., help='DBSCAN radius in pixels')
    parser.add_argument('--min-hds', type=int, default=1, help='DBSCAN min_samples (MinHds)')
    parser.add_argument('--k', type=int, nargs='+', help='k-means clusters: one, or one per layer')
    parser.add_argument('--centroid', choices=['select', 'average'], default='select')
    ffn = parser.add_mutually_exclusive_group()
    ffn.add_argument('--no-ffn-clustering', action='store_true', help='every layer keeps its FFN')
    ffn.add_argument(
        '--ffn-groups',
        nargs='+',
        metavar='FIRST-LAST',
        help='explicit FFN groups of adjacent layers, e.g. 5-8')
    parser.add_argument('--plot', help='PNG of MAD per head (default: next to --out)')
    parser.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')
    parser.add_argument('--seed', type=int, default=0, help='seed of the image sample')
    parser.add_argument(
        '--cfg-options', nargs='+', action=DictAction, help='override config entries')
    add_trust_option(parser)
    return parser, parser.parse_args(argv)


def parse_groups(specs):
    groups = []
    for spec in specs:
        first, _, last = spec.partition('-')
        try:
            groups.append(list(range(int(first), int(last or first) + 1)))
        except ValueError:
            raise SetupError(f'--ffn-groups entry {spec!r} is not FIRST-LAST (e.g. 5-8)') from None
    return groups


def build_ancestry(cfg, checkpoint: str, device: str):
    """The config's model, built as the Runner builds it, with the checkpoint's
    backbone weights, in eval mode."""
    model = init_model(cfg)
    backbone = getattr(model, 'backbone', model)
    try:
        ancestry_for(backbone)
    except ValueError as err:
        raise SetupError(f"the config's backbone: {err}") from None
    if is_local_path(checkpoint) and not osp.isfile(checkpoint):
        raise SetupError(f'checkpoint {checkpoint!r} does not exist')
    state_dict = load_state_dict_file(checkpoint)
    prefix = 'backbone.' if any(k.startswith('backbone.') for k in state_dict) else None
    if isinstance(backbone, ViT):
        load_pretrained(backbone, checkpoint, prefix=prefix)
    else:
        load_own_keys(backbone,
                      strip_prefix(state_dict, prefix) if prefix else state_dict, checkpoint)
    return model.to(device).eval()


def load_own_keys(backbone: nn.Module, state_dict: dict, checkpoint: str) -> None:
    """Load a library backbone (mmpretrain's Swin, LeViT) from a checkpoint in
    its own keys: every parameter and BatchNorm statistic must be there."""
    try:
        missing, _ = backbone.load_state_dict(state_dict, strict=False)
    except RuntimeError as err:  # shape mismatches
        raise SetupError(f'checkpoint {checkpoint} does not fit the '
                         f'{type(backbone).__name__}: {err}') from None
    model_state = backbone.state_dict()
    lacking = [key for key in missing if model_state[key].is_floating_point()]
    if lacking:
        raise SetupError(f'checkpoint {checkpoint} lacks {len(lacking)} weight(s) of the '
                         f'{type(backbone).__name__}: {group_keys(lacking)}')


def image_samples(cfg, data, num_images: int, seed: int):
    """``(fetch, items)``: ``fetch(item)`` is the test pipeline's output for an
    item (an image path, or an index of the config's val dataset); ``items``
    is a seeded sample of ``num_images`` of them."""
    loader = cfg.get('test_dataloader') or cfg.get('val_dataloader')
    if data is None:
        try:
            check_data_roots(dict(val_dataloader=cfg.val_dataloader))
        except FileNotFoundError as err:
            raise SetupError(str(err)) from err
        dataset = DATASETS.build(cfg.val_dataloader.dataset)
        items = list(range(len(dataset)))
        fetch = dataset.__getitem__
    else:
        if not osp.isdir(data):
            raise SetupError(f'--data {data!r} is not a folder')
        items = sorted(str(p) for p in Path(data).rglob('*') if p.suffix.lower() in IMAGE_SUFFIXES)
        if not items:
            raise SetupError(f'--data {data!r} holds no image files ({sorted(IMAGE_SUFFIXES)})')
        pipeline = Compose(loader.dataset.pipeline)
        fetch = lambda path: pipeline(dict(img_path=path))  # noqa: E731
    if num_images < 1:
        raise SetupError(f'--num-images={num_images} must be >= 1')
    if len(items) > num_images:
        items = random.Random(seed).sample(items, num_images)
    return fetch, items


def batches(model, fetch, items, batch_size: int, progress: ProgressBar):
    """Preprocessed image batches: the pipeline, then the model's data_preprocessor."""
    for start in range(0, len(items), batch_size):
        chunk = [fetch(item) for item in items[start:start + batch_size]]
        with torch.no_grad():
            inputs = model.data_preprocessor(pseudo_collate(chunk), False)['inputs']
        yield inputs
        progress.update(len(chunk))


def main(argv=None):
    parser, args = parse_args(argv)
    plot = args.plot or osp.splitext(args.out)[0] + '_mad.png'
    with trusted_checkpoints(trusted_names(args.trust_checkpoint, [args.checkpoint])):
        logger = MMLogger.get_instance('learngene', log_level='INFO')
        try:
            cfg = load_config(args.config, args.cfg_options)
            inputs = config_inputs(cfg) + [args.checkpoint, args.data]
            for out in (args.out, plot):
                refuse_overwriting_inputs(out, inputs)
            groups = parse_groups(args.ffn_groups) if args.ffn_groups else None
            try:
                check_clustering_args(args.method, args.eps, args.min_hds, args.k)
            except ValueError as err:
                raise SetupError(str(err)) from err
            model = build_ancestry(cfg, args.checkpoint, args.device)
            fetch, items = image_samples(cfg, args.data, args.num_images, args.seed)
        except (SetupError, OutputIsInputError) as err:
            parser.error(str(err))
        logger.info(
            f'MAD over {len(items)} images from {args.data or "the val dataset"} on {args.device}')
        progress = ProgressBar(len(items))
        k = None if not args.k else (args.k[0] if len(args.k) == 1 else args.k)
        start = time.perf_counter()
        try:
            learngene = build_learngene(
                model.backbone,
                batches(model, fetch, items, args.batch_size, progress),
                method=args.method,
                eps=args.eps,
                min_samples=args.min_hds,
                k=k,
                centroid=args.centroid,
                ffn_clustering=not args.no_ffn_clustering,
                ffn_groups=groups,
                out=args.out,
                settings=dict(config=osp.basename(args.config)))
        except ValueError as err:
            parser.exit(2, f'\nerror: {err}\n')
        plot_mad(learngene, plot)
        # The result on stdout (the logger's stream is the one of the first
        # call in the process).
        print('\n' + learngene.summary())
        logger.info(f'built in {time.perf_counter() - start:.1f} s (the stages: '
                    'tools/learngene/benchmark_learngene.py)')
        logger.info(f'wrote {args.out} and {plot}')


if __name__ == '__main__':
    main()
