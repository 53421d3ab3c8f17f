"""FLOPs and parameters of a config's model.

    python tools/analysis_tools/get_flops.py CONFIG [--checkpoint CKPT] [--num-images N]
                                             [--shape H W] [--out FILE.json]
                                             [--cfg-options k=v ...]

Convention (mmengine.analysis / fvcore): one multiply-add is one FLOP;
attention matmuls are counted although fused attention hides them from the
operator counter. Static models are counted on one input of ``--shape``.
DyT models (a DyTViT backbone that dispatches) cost what their active tokens
cost, so they are counted per image over the first N images of the config's
``val_dataloader`` and the mean is reported, with the activation rate and the
ratio to the dense count (every token through every block part).
Video recognisers (mmaction2) are counted per clip, on the validation clips
(all views of a sample, as the test pipeline makes them): every frame
through the ViT (DyT: each frame at its active tokens) plus the head's
pooling over the tokens of all frames; ``--shape`` resizes the frames.
Token reductions (ToMe, EViT) are counted at the token counts each block
runs; ToMe applies to a trained DyT checkpoint at test time, e.g.
``--cfg-options model.backbone.token_reduction.type=ToMe
model.backbone.token_reduction.r=8``.
The model is built as the Runner builds it (:func:`mmvitdyn.apis.init_model`),
so images are normalised as in training and evaluation. ``--out`` also writes
the figures (per-image FLOPs and activation rates included) as JSON.
Parameters: the whole model's, and for a DyT backbone the paper's "Params (M)"
figure apart: its adapters and token dispatchers (what DyT trains in the
frozen ViT), head excluded.
"""
import mmvitdyn  # noqa: F401 (first: OpenMP's wait policy, before torch loads) isort: skip
import argparse
import os.path as osp
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from mmengine.config import DictAction
from mmengine.utils import ProgressBar

from mmvitdyn.analysis import (DyTFlopCounter, TensorForward, count_params, find_dyt_backbone,
                               flop_analyzer, is_recognizer, part_rates, val_images)
from mmvitdyn.apis import init_model
from mmvitdyn.checkpoint import is_dyt_param, is_local_path, trusted_checkpoints, trusted_names
from mmvitdyn.cli import add_trust_option
from mmvitdyn.deployment import input_size
from mmvitdyn.engine import SetupError, config_inputs, load_config
from mmvitdyn.utils import OutputIsInputError, dump_json_atomically, refuse_overwriting_inputs


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Count FLOPs and parameters of a model')
    parser.add_argument('config', help='config file path')
    parser.add_argument('--checkpoint', help='weights to load (DyT counts depend on them)')
    parser.add_argument(
        '--num-images',
        type=int,
        default=100,
        help='validation images to average DyT FLOPs over (default 100)')
    parser.add_argument(
        '--shape',
        type=int,
        nargs=2,
        metavar=('H', 'W'),
        help='input size; default: the backbone\'s img_size (static models) '
        'or the validation images\' size (DyT models)')
    parser.add_argument('--out', help='also write the figures to this JSON file')
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        help='override config entries, e.g. model.backbone.dispatch=attn')
    add_trust_option(parser)
    return parser, parser.parse_args(argv)


def dyt_params(backbone: torch.nn.Module) -> int:
    """Parameters of the adapters and token dispatchers of a DyT backbone."""
    return sum(p.numel() for name, p in backbone.named_parameters() if is_dyt_param(name))


def report_params(model: torch.nn.Module) -> dict:
    total, trainable = count_params(model), count_params(model, trainable_only=True)
    print(f'Params:           {total / 1e6:.3f} M (trainable {trainable / 1e6:.3f} M)')
    figures = dict(params=total, trainable_params=trainable)
    backbone = find_dyt_backbone(model)
    if backbone is not None:
        figures['dyt_params'] = dyt_params(backbone)
        print(f'DyT params:       {figures["dyt_params"] / 1e6:.3f} M (the paper\'s "Params (M)": '
              'adapters + dispatchers of the backbone, head excluded)')
    return figures


def resized(inputs: torch.Tensor, shape: Tuple[int, int]) -> torch.Tensor:
    """``inputs`` (..., C, H, W), images or the frames of clips, resized to ``shape``."""
    frames = inputs.reshape(-1, *inputs.shape[-3:])
    frames = F.interpolate(frames, size=shape, mode='bilinear', align_corners=False)
    return frames.reshape(*inputs.shape[:-2], *shape)


def static_report(model: torch.nn.Module, example: torch.Tensor) -> dict:
    """Figures of a model without dispatch on ``example``, one input (1, ...)."""
    with torch.no_grad():
        analyzer = flop_analyzer(TensorForward(model), (example, ))
        flops = analyzer.total()
    print(f'Input shape:      {tuple(example.shape[1:])}')
    print(f'FLOPs:            {flops / 1e9:.4f} G')
    params = report_params(model)
    uncounted = ', '.join(sorted(analyzer.unsupported_ops()))
    print(f'Uncounted ops:    {uncounted or "-"} (no multiply-adds by the fvcore convention)')
    return dict(input_shape=list(example.shape[1:]), flops=flops, **params)


def dyt_report(cfg, model: torch.nn.Module, num_images: int, shape: Optional[Tuple[int,
                                                                                   int]]) -> dict:
    traced = TensorForward(model)
    counter, flops, rates = None, [], []
    unit = 'clip' if is_recognizer(model) else 'image'
    progress = ProgressBar(num_images)
    with torch.no_grad():
        for inputs in val_images(cfg, model, num_images):
            if shape is not None:
                inputs = resized(inputs, shape)
            if counter is None:
                counter = DyTFlopCounter(traced, inputs[:1])
            traced(inputs)
            masks = counter.backbone.dispatch_masks()
            flops.append(counter(masks))
            names, frame_rates = part_rates(masks)  # (P, B * frames): per input below
            rates.append(frame_rates.reshape(len(names), inputs.shape[0], -1).mean(2))
            for _ in range(inputs.shape[0]):
                progress.update()
    flops, rates = torch.cat(flops), torch.cat(rates, dim=1)
    print(f'\nInput shape:      {tuple(inputs.shape[1:])}')
    print(f'Dense FLOPs:      {counter.static_flops / 1e9:.4f} G (every token active)')
    print(f'DyT FLOPs:        {flops.mean() / 1e9:.4f} G per {unit}, mean over {len(flops)} '
          f'val {unit}s (min {flops.min() / 1e9:.4f}, max {flops.max() / 1e9:.4f})')
    print(f'DyT / dense:      {float(flops.mean()) / counter.static_flops:.4f}')
    print(f'Activation rate:  {rates.mean():.4f}')
    per_part = '  '.join(f'{name}={rate:.2f}' for name, rate in zip(names, rates.mean(1).tolist()))
    print(f'Per block part:   {per_part}')
    params = report_params(model)
    return dict(
        input_shape=list(inputs.shape[1:]),
        per=unit,
        dense_flops=counter.static_flops,
        flops=float(flops.mean()),
        flops_per_image=flops.tolist(),
        activation_rate=float(rates.mean()),
        part_rates=dict(zip(names,
                            rates.mean(1).tolist())),
        image_rates=rates.mean(0).tolist(),
        **params)


def main(argv=None):
    parser, args = parse_args(argv)
    try:  # the checkpoint is optional here
        trusted = trusted_names(args.trust_checkpoint, [args.checkpoint])
    except ValueError as err:
        parser.error(str(err))
    with trusted_checkpoints(trusted):
        try:
            if args.checkpoint is not None and is_local_path(args.checkpoint) \
                    and not osp.isfile(args.checkpoint):
                raise SetupError(f'checkpoint {args.checkpoint!r} does not exist')
            cfg = load_config(args.config, args.cfg_options)
            inputs = config_inputs(cfg) + [args.checkpoint]
            if args.out:
                refuse_overwriting_inputs(args.out, inputs)
            model = init_model(cfg, args.checkpoint)
        except (SetupError, FileNotFoundError, OutputIsInputError) as err:
            parser.error(str(err))
        shape = tuple(args.shape) if args.shape else None
        backbone = find_dyt_backbone(model)
        print(f'Config:           {args.config}')
        try:
            if backbone is not None and backbone.dispatch is not None:
                figures = dyt_report(cfg, model, args.num_images, shape)
            elif is_recognizer(model):  # clips of the validation set's shape
                example = next(val_images(cfg, model, 1))[:1]
                figures = static_report(model,
                                        example if shape is None else resized(example, shape))
            else:
                figures = static_report(model, torch.zeros(1, 3, *(shape or input_size(model))))
        except FileNotFoundError as err:
            parser.error(f'these FLOPs are counted on validation inputs: {err}')
        if args.out:
            dump_json_atomically(
                dict(config=args.config, checkpoint=args.checkpoint, **figures), args.out, inputs)
            print(f'Wrote:            {args.out}')


if __name__ == '__main__':
    main()
