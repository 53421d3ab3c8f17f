"""Export a config's model with its checkpoint to ONNX, batch axis dynamic.

    python tools/deployment/pytorch2onnx.py CONFIG CHECKPOINT OUT.onnx [--opset 20]
        [--img-size H [W]] [--part model|backbone] [--cfg-options k=v ...]

Exported with torch's ``torch.export``-based ONNX exporter at ONNX opset 20
(torch 2.14's default; ``--opset`` to change it); the image size is fixed,
the batch size free. The input is the normalised image batch (B, 3, H, W),
as the model's data preprocessor hands it to the network (normalisation,
resizing and padding stay outside the ONNX graph): the tool prints the
input's and outputs' names and the preprocessing (image size, channel
order, mean and std), and stores them with the class names in the file's
metadata (``metadata_props``, JSON values) for the code that runs it
(docs/finetune_custom_data.md runs one with ONNX Runtime). ``--part model`` (the
default) exports the whole model's tensor forward: a classifier's class
scores (DyT, AdaptFormer, DyT + ToMe ...); ``--part backbone`` the
backbone's outputs, e.g. the feature maps a segmentor's UperNet reads:

    python tools/deployment/pytorch2onnx.py \\
        configs/dyt/upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py CKPT \\
        upernet_dyt_backbone.onnx --part backbone --img-size 512

A video config (an mmaction2 recogniser, ``configs/dyt_video/``) exports
with clips (B, 3, T, H, W) as its input 'clips', T the ``clip_len`` of its
test pipeline's frame sampler (stored as ``frames``), and one row of class
scores a clip: a test sample of several views (clips, crops) is that many
rows, whose scores the caller averages (``average_clips='score'``).

DyT's token dispatch exports as it runs in evaluation (active tokens only,
gathered across the batch). The model is built as the Runner builds it
(:func:`mmvitdyn.apis.init_model`); the checkpoint is read by the project's
weights-only loader (``--trust-checkpoint`` to unpickle one in full).
"""
import mmvitdyn  # noqa: F401 (first: OpenMP's wait policy, before torch loads) isort: skip
import argparse
import os.path as osp

import torch
from mmengine.config import DictAction

from mmvitdyn.apis import init_model
from mmvitdyn.checkpoint import is_local_path, trusted_checkpoints, trusted_names
from mmvitdyn.cli import add_trust_option
from mmvitdyn.deployment import (DEFAULT_OPSET, EXPORT_PARTS, INPUT_LAYOUTS, export_onnx,
                                 export_part, input_size, output_names, preprocessing)
from mmvitdyn.engine import SetupError, config_inputs, load_config
from mmvitdyn.utils import OutputIsInputError, atomic_target, refuse_overwriting_inputs


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Export a model to ONNX (dynamic batch)')
    parser.add_argument('config', help='config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument('out', help='the ONNX file to write')
    parser.add_argument(
        '--opset',
        type=int,
        default=DEFAULT_OPSET,
        help=f'ONNX opset (default {DEFAULT_OPSET}, torch 2.14\'s default)')
    parser.add_argument(
        '--img-size',
        type=int,
        nargs='+',
        metavar='SIZE',
        help='input H [W] (default: the backbone\'s img_size)')
    parser.add_argument(
        '--part',
        default='model',
        choices=EXPORT_PARTS,
        help="'model': the model's tensor forward (class scores); 'backbone': the backbone's "
        'outputs (a segmentor\'s feature maps)')
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        help='override config entries, e.g. model.backbone.token_reduction.type=ToMe')
    add_trust_option(parser)
    args = parser.parse_args(argv)
    if args.img_size is not None and len(args.img_size) > 2:
        parser.error(f'--img-size takes H or H W, got {len(args.img_size)} values')
    return parser, args


def main(argv=None):
    parser, args = parse_args(argv)
    try:
        trusted = trusted_names(args.trust_checkpoint, [args.checkpoint])
    except ValueError as err:
        parser.error(str(err))
    with trusted_checkpoints(trusted):
        try:
            if is_local_path(args.checkpoint) and not osp.isfile(args.checkpoint):
                raise SetupError(f'checkpoint {args.checkpoint!r} does not exist')
            cfg = load_config(args.config, args.cfg_options)
            inputs = config_inputs(cfg) + [args.checkpoint]
            refuse_overwriting_inputs(args.out, inputs)
            model = init_model(cfg, args.checkpoint)
        except (SetupError, FileNotFoundError, OutputIsInputError) as err:
            parser.error(str(err))
    size = input_size(model) if args.img_size is None else (args.img_size[0], args.img_size[-1])
    try:
        spec = preprocessing(model,
                             cfg.get('test_dataloader', {}).get('dataset', {}).get('pipeline', ()))
    except ValueError as err:
        parser.error(f'{args.config}: {err}')
    spec['input_size'] = list(size)
    module = export_part(model, args.part)
    shape = (3, spec['frames'], *size) if 'frames' in spec else (3, *size)
    example = torch.zeros(2, *shape)
    with torch.no_grad():
        example_outputs = module(example)
    names = output_names(example_outputs, args.part)
    shapes = [example_outputs] if isinstance(example_outputs, torch.Tensor) else example_outputs
    with atomic_target(args.out, inputs) as tmp:
        export_onnx(module, example, str(tmp), opset=args.opset, outputs=names, metadata=spec)
    print(f'Exported {args.part} of {args.config} (opset {args.opset}) to {args.out}')
    print(f"input {INPUT_LAYOUTS[example.dim()][0]!r}: float32 "
          f"(batch, {', '.join(map(str, shape))}), channels {spec['channel_order']}, " +
          (f"(pixel - mean) / std with mean {spec['mean']} std {spec['std']}"
           if spec['mean'] is not None else 'pixel values (0-255, not normalised)'))
    for name, output in zip(names, shapes):
        print(f"output {name!r}: float32 (batch, {', '.join(map(str, output.shape[1:]))})")


if __name__ == '__main__':
    main()
