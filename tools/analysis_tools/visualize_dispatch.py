"""Draw where a DyT model's tokens run and where they skip.

    python tools/analysis_tools/visualize_dispatch.py CONFIG CHECKPOINT IMAGE [IMAGE ...]
        [--out-dir DIR] [--cfg-options k=v ...]

Writes into ``--out-dir`` (default ``work_dirs/dispatch_maps``):
- ``activation_rates.png``: active fraction of patch tokens per block and
  dispatched part, mean over the given images (bars), and per image (dots);
- ``activation_rates.json``: the same figures, overall and per image;
- ``<image name>_dispatch.png`` per image: the image, then for each
  dispatched part (row) and block (column) the image with the patches that
  skip the part hatched dark grey.
The model is built as the Runner builds it (:func:`mmvitdyn.apis.init_model`);
images go through the config's test pipeline (without its annotation
loading) and the model's data preprocessor, as in evaluation.
"""
import mmvitdyn  # noqa: F401 (first: OpenMP's wait policy, before torch loads) isort: skip
import argparse
import os
import os.path as osp
from typing import List

import torch
from mmengine.config import DictAction
from mmengine.dataset import Compose, pseudo_collate

from mmvitdyn.analysis import TensorForward, find_dyt_backbone, part_rates
from mmvitdyn.apis import init_model
from mmvitdyn.checkpoint import is_local_path, trusted_checkpoints, trusted_names
from mmvitdyn.cli import add_trust_option
from mmvitdyn.engine import SetupError, config_inputs, load_config
from mmvitdyn.utils import OutputIsInputError, dump_json_atomically, refuse_overwriting_inputs
from mmvitdyn.visualization import SkipView, plot_rates, plot_skip_map, rates_summary


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Plot DyT activation rates and skip maps')
    parser.add_argument('config', help='config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument('images', nargs='+', help='image files')
    parser.add_argument('--out-dir', default='work_dirs/dispatch_maps')
    parser.add_argument(
        '--cfg-options', nargs='+', action=DictAction, help='override config entries')
    add_trust_option(parser)
    return parser, parser.parse_args(argv)


def output_paths(out_dir: str, images: List[str]) -> List[str]:
    """The rates' plot and JSON, then one skip map per image."""
    names = ['activation_rates.png', 'activation_rates.json']
    names += [f'{osp.splitext(osp.basename(path))[0]}_dispatch.png' for path in images]
    return [osp.join(out_dir, name) for name in names]


def load_images(cfg, paths: List[str]) -> dict:
    """The images through the test pipeline, collated as a dataloader would.

    Annotation loading is left out (as OpenMMLab's inferencers do): the
    images need not belong to a data set.
    """
    pipeline = Compose([
        t for t in cfg.test_dataloader.dataset.pipeline
        if not t['type'].startswith('LoadAnnotations')
    ])
    return pseudo_collate([pipeline(dict(img_path=path)) for path in paths])


def main(argv=None):
    parser, args = parse_args(argv)
    with trusted_checkpoints(trusted_names(args.trust_checkpoint, [args.checkpoint])):
        try:
            for path in [args.checkpoint, *args.images]:
                if is_local_path(path) and not osp.isfile(path):
                    raise SetupError(f'{path!r} does not exist')
            cfg = load_config(args.config, args.cfg_options)
            written = output_paths(args.out_dir, args.images)
            inputs = config_inputs(cfg) + [args.checkpoint, *args.images]
            for path in written:
                refuse_overwriting_inputs(path, inputs)
            model = init_model(cfg, args.checkpoint)
            backbone = find_dyt_backbone(model)
            if backbone is None or backbone.dispatch is None:
                raise SetupError(
                    f'{args.config}: the model has no DyT backbone that dispatches tokens')
        except (SetupError, OutputIsInputError) as err:
            parser.error(str(err))
        data = load_images(cfg, args.images)
        with torch.no_grad():
            inputs = model.data_preprocessor(data, False)['inputs']
            TensorForward(model)(inputs)
        grid = (inputs.shape[2] // backbone.patch_size, inputs.shape[3] // backbone.patch_size)
        masks = [{
            part: m.cpu()
            for part, m in block.items()
        } for block in backbone.dispatch_masks()]
        names, rates = part_rates(masks)
        os.makedirs(args.out_dir, exist_ok=True)
        plot_rates(names, rates, written[0])
        dump_json_atomically(rates_summary(names, rates, args.images), written[1])
        for i, path in enumerate(args.images):
            # Packed inputs are the pipeline's (C, H, W) images, BGR as loaded.
            image = data['inputs'][i].permute(1, 2, 0).numpy()[..., ::-1]
            name = osp.splitext(osp.basename(path))[0]
            view = SkipView(image, [{
                part: m[i]
                for part, m in block.items()
            } for block in masks], grid)
            plot_skip_map([view], backbone.patch_size, name, written[2 + i])
        print('\n'.join(['Wrote:'] + written))


if __name__ == '__main__':
    main()
