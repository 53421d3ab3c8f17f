"""FLOPs and parameters of a config's model.

    python tools/analysis_tools/get_flops.py CONFIG [--checkpoint CKPT] [--num-images N]
                                             [--shape H W] [--cfg-options k=v ...]

Convention (mmengine.analysis / fvcore): one multiply-add is one FLOP;
attention matmuls are counted although fused attention hides them from the
operator counter. Static models are counted on one input of ``--shape``.
DyT models (a DyTViT backbone that dispatches) cost what their active tokens
cost, so they are counted per image over the first N images of the config's
``val_dataloader`` and the mean is reported, with the activation rate and the
ratio to the dense count (every token through every block part).
"""
import argparse
import os.path as osp
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from mmengine.config import DictAction
from mmengine.utils import ProgressBar

from mmvitdyn.analysis import (DyTFlopCounter, TensorForward, build_eval_model, count_params,
                               find_dyt_backbone, flop_analyzer, part_rates, val_images)
from mmvitdyn.engine.runner_setup import SetupError, load_config


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Count FLOPs and parameters of a model')
    parser.add_argument('config', help='config file path')
    parser.add_argument('--checkpoint', help='weights to load (DyT counts depend on them)')
    parser.add_argument('--num-images', type=int, default=100,
                        help='validation images to average DyT FLOPs over (default 100)')
    parser.add_argument('--shape', type=int, nargs=2, metavar=('H', 'W'),
                        help='input size; default: the backbone\'s img_size (static models) '
                        'or the validation images\' size (DyT models)')
    parser.add_argument('--cfg-options', nargs='+', action=DictAction,
                        help='override config entries, e.g. model.backbone.dispatch=attn')
    return parser, parser.parse_args(argv)


def default_shape(model: torch.nn.Module) -> Tuple[int, int]:
    """The size the backbone's position embedding is made for, else 224 x 224."""
    backbone = getattr(model, 'backbone', model)
    grid, patch = getattr(backbone, 'patch_resolution', None), getattr(backbone, 'patch_size', None)
    if grid is None or patch is None:
        return 224, 224
    return grid[0] * patch, grid[1] * patch


def report_params(model: torch.nn.Module) -> None:
    total, trainable = count_params(model), count_params(model, trainable_only=True)
    print(f'Params:           {total / 1e6:.3f} M (trainable {trainable / 1e6:.3f} M)')


def static_report(model: torch.nn.Module, shape: Tuple[int, int]) -> None:
    with torch.no_grad():
        analyzer = flop_analyzer(TensorForward(model), (torch.zeros(1, 3, *shape), ))
        flops = analyzer.total()
    print(f'Input shape:      (3, {shape[0]}, {shape[1]})')
    print(f'FLOPs:            {flops / 1e9:.4f} G')
    report_params(model)
    uncounted = ', '.join(sorted(analyzer.unsupported_ops()))
    print(f'Uncounted ops:    {uncounted or "-"} (no multiply-adds by the fvcore convention)')


def dyt_report(cfg, model: torch.nn.Module, num_images: int,
               shape: Optional[Tuple[int, int]]) -> None:
    traced = TensorForward(model)
    counter, flops, rates = None, [], []
    progress = ProgressBar(num_images)
    with torch.no_grad():
        for inputs in val_images(cfg, model, num_images):
            if shape is not None:
                inputs = F.interpolate(inputs, size=shape, mode='bilinear', align_corners=False)
            if counter is None:
                counter = DyTFlopCounter(traced, inputs[:1])
            traced(inputs)
            masks = counter.backbone.dispatch_masks()
            flops.append(counter(masks))
            names, batch_rates = part_rates(masks)
            rates.append(batch_rates)
            for _ in range(inputs.shape[0]):
                progress.update()
    flops, rates = torch.cat(flops), torch.cat(rates, dim=1)
    print(f'\nInput shape:      {tuple(inputs.shape[1:])}')
    print(f'Dense FLOPs:      {counter.static_flops / 1e9:.4f} G (every token active)')
    print(f'DyT FLOPs:        {flops.mean() / 1e9:.4f} G per image, mean over {len(flops)} '
          f'val images (min {flops.min() / 1e9:.4f}, max {flops.max() / 1e9:.4f})')
    print(f'DyT / dense:      {float(flops.mean()) / counter.static_flops:.4f}')
    print(f'Activation rate:  {rates.mean():.4f}')
    per_part = '  '.join(f'{name}={rate:.2f}' for name, rate in zip(names, rates.mean(1).tolist()))
    print(f'Per block part:   {per_part}')
    report_params(model)


def main(argv=None):
    parser, args = parse_args(argv)
    try:
        if args.checkpoint is not None and not osp.isfile(args.checkpoint):
            raise SetupError(f'checkpoint {args.checkpoint!r} does not exist')
        cfg = load_config(args.config, args.cfg_options)
        model = build_eval_model(cfg, args.checkpoint)
    except (SetupError, FileNotFoundError) as err:
        parser.error(str(err))
    shape = tuple(args.shape) if args.shape else None
    backbone = find_dyt_backbone(model)
    print(f'Config:           {args.config}')
    if backbone is not None and backbone.dispatch is not None:
        try:
            dyt_report(cfg, model, args.num_images, shape)
        except FileNotFoundError as err:
            parser.error(f'DyT FLOPs are counted on validation images: {err}')
    else:
        static_report(model, shape or default_shape(model))


if __name__ == '__main__':
    main()
