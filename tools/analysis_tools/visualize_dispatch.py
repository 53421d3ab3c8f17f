"""Draw where a DyT model's tokens run and where they skip.

    python tools/analysis_tools/visualize_dispatch.py CONFIG CHECKPOINT IMAGE [IMAGE ...]
        [--out-dir DIR] [--cfg-options k=v ...]

Writes into ``--out-dir`` (default ``work_dirs/dispatch_maps``):
- ``activation_rates.png``: active fraction of patch tokens per block and
  dispatched part, mean over the given images (bars), and per image (dots);
- ``<image name>_dispatch.png`` per image: the image, then for each
  dispatched part (row) and block (column) the image with the patches that
  skip the part shaded red.
Images go through the config's test pipeline and the model's data
preprocessor, as in evaluation.
"""
import argparse
import os
import os.path as osp
from typing import List

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from mmengine.config import DictAction  # noqa: E402
from mmengine.dataset import Compose, pseudo_collate  # noqa: E402

from mmvitdyn.analysis import (TensorForward, build_eval_model, find_dyt_backbone,  # noqa: E402
                               part_rates)
from mmvitdyn.engine.runner_setup import SetupError, load_config  # noqa: E402


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Plot DyT activation rates and skip maps')
    parser.add_argument('config', help='config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument('images', nargs='+', help='image files')
    parser.add_argument('--out-dir', default='work_dirs/dispatch_maps')
    parser.add_argument('--cfg-options', nargs='+', action=DictAction,
                        help='override config entries')
    return parser, parser.parse_args(argv)


def load_images(cfg, paths: List[str]) -> dict:
    """The images through the test pipeline, collated as a dataloader would."""
    pipeline = Compose(cfg.test_dataloader.dataset.pipeline)
    return pseudo_collate([pipeline(dict(img_path=path)) for path in paths])


def plot_rates(names: List[str], rates: torch.Tensor, out_file: str) -> None:
    """Bars: mean rate per block, one colour per part; dots: the images."""
    parts = sorted({name.split('.')[1] for name in names})
    blocks = sorted({int(name.split('.')[0]) for name in names})
    width = 0.8 / len(parts)
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(blocks) * len(parts) + 2), 4))
    for k, part in enumerate(parts):
        rows = [i for i, name in enumerate(names) if name.split('.')[1] == part]
        offset = (k - (len(parts) - 1) / 2) * width
        x = np.array([int(names[i].split('.')[0]) for i in rows]) + offset
        ax.bar(x, rates[rows].mean(1).numpy(), width, label=part, alpha=0.8)
        for xi, row in zip(x, rows):
            ax.scatter(np.full(rates.shape[1], xi), rates[row].numpy(), s=6, c='k', zorder=3)
    ax.set_xticks(blocks)
    ax.set_xlabel('block')
    ax.set_ylabel('active fraction of patch tokens')
    ax.set_ylim(0, 1.05)
    ax.set_title(f'DyT activation rates ({rates.shape[1]} images, mean {rates.mean():.2f})')
    ax.legend(title='part', loc='upper left', bbox_to_anchor=(1, 1))
    fig.tight_layout()
    fig.savefig(out_file, dpi=120)
    plt.close(fig)


def plot_skip_map(image: np.ndarray, masks: List[dict], index: int, patch_size: int,
                  title: str, out_file: str) -> None:
    """The image, then one panel per (part, block): skipped patches shaded red."""
    height, width = image.shape[:2]
    grid = (height // patch_size, width // patch_size)
    parts = sorted({part for block in masks for part in block})
    fig, axes = plt.subplots(len(parts), len(masks) + 1, squeeze=False,
                             figsize=(1.6 * (len(masks) + 1), 1.8 * len(parts)))
    for row, part in enumerate(parts):
        axes[row, 0].imshow(image)
        axes[row, 0].set_title('input', fontsize=8)
        for col, block in enumerate(masks, start=1):
            ax = axes[row, col]
            ax.imshow(image)
            if part in block:
                active = block[part][index].reshape(grid).float().numpy()
                shade = np.zeros((*grid, 4))
                shade[..., 0] = 1.0  # red
                shade[..., 3] = 0.55 * (1 - active)
                # Pixel centres sit on integers: the image spans -0.5 .. size - 0.5.
                ax.imshow(shade, extent=(-0.5, width - 0.5, height - 0.5, -0.5),
                          interpolation='nearest')
                ax.set_title(f'{col - 1}.{part} {active.mean():.0%}', fontsize=8)
    for ax in axes.flat:
        ax.axis('off')
    fig.suptitle(f'{title}: patches shaded red skip the part', fontsize=9)
    fig.tight_layout()
    fig.savefig(out_file, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser, args = parse_args(argv)
    try:
        for path in [args.checkpoint, *args.images]:
            if not osp.isfile(path):
                raise SetupError(f'{path!r} does not exist')
        cfg = load_config(args.config, args.cfg_options)
        model = build_eval_model(cfg, args.checkpoint)
        backbone = find_dyt_backbone(model)
        if backbone is None or backbone.dispatch is None:
            raise SetupError(f'{args.config}: the model has no DyT backbone that dispatches tokens')
    except SetupError as err:
        parser.error(str(err))
    data = load_images(cfg, args.images)
    with torch.no_grad():
        TensorForward(model)(model.data_preprocessor(data, False)['inputs'])
    masks = [{part: m.cpu() for part, m in block.items()} for block in backbone.dispatch_masks()]
    names, rates = part_rates(masks)
    os.makedirs(args.out_dir, exist_ok=True)
    written = [osp.join(args.out_dir, 'activation_rates.png')]
    plot_rates(names, rates, written[0])
    for i, path in enumerate(args.images):
        # Packed inputs are the pipeline's (C, H, W) images, BGR as loaded.
        image = data['inputs'][i].permute(1, 2, 0).numpy()[..., ::-1]
        name = osp.splitext(osp.basename(path))[0]
        written.append(osp.join(args.out_dir, f'{name}_dispatch.png'))
        plot_skip_map(image, masks, i, backbone.patch_size, name, written[-1])
    print('\n'.join(['Wrote:'] + written))


if __name__ == '__main__':
    main()
