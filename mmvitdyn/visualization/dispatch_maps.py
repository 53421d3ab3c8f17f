"""Where a DyT model's tokens run and where they skip, as pictures and figures
(drawn on :class:`matplotlib.figure.Figure` objects: no display, no global state)."""
from typing import Dict, List, NamedTuple, Sequence, Tuple

import numpy as np
import torch
from matplotlib.figure import Figure

from ..utils import save_figure_atomically


def rates_summary(names: List[str], rates: torch.Tensor, images: Sequence[str]) -> dict:
    """Overall, per-part and per-image rates of ``rates`` (P, B), the active
    fraction of patch tokens, for part ``names`` (P,) and ``images`` (B,)."""
    return dict(
        activation_rate=float(rates.mean()),
        part_rates=dict(zip(names,
                            rates.mean(1).tolist())),
        images={
            image:
            dict(
                activation_rate=float(rates[:, i].mean()),
                part_rates=dict(zip(names, rates[:, i].tolist())))
            for i, image in enumerate(images)
        })


def plot_rates(names: List[str], rates: torch.Tensor, out_file: str) -> None:
    """Save ``out_file``, a PNG: bars of the mean rate per block (a colour per
    part), a dot per image; ``names`` (P,), ``rates`` (P, B)."""
    parts = sorted({name.split('.')[1] for name in names})
    blocks = sorted({int(name.split('.')[0]) for name in names})
    width = 0.8 / len(parts)
    fig = Figure(figsize=(max(6, 0.6 * len(blocks) * len(parts) + 2), 4))
    ax = fig.subplots()
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
    save_figure_atomically(fig, out_file, dpi=120)


class SkipView(NamedTuple):
    """One backbone input of an image and what its tokens did.

    Args:
        image (ndarray): The input as a picture (H, W, 3), RGB, uint8.
        masks (list[dict[str, Tensor]]): Per DyT block, part -> (N,) patch mask.
        grid (tuple[int, int]): Patch grid (rows, cols), N = rows * cols; the
            panels crop padding beyond the image.
        label (str): Names the view in its row, e.g. a crop. Defaults to ''.
    """
    image: np.ndarray
    masks: List[Dict[str, torch.Tensor]]
    grid: Tuple[int, int]
    label: str = ''


def plot_skip_map(views: List[SkipView], patch_size: int, title: str, out_file: str) -> Figure:
    """Save ``out_file``, a PNG with ``title``: a row per (view, part), the input
    then a panel per block, skipping patches (``patch_size`` pixels) shaded red.
    ``views`` (list[SkipView]): one, or one per sliding-window crop. Returns the
    figure."""
    rows = [(view, part) for view in views
            for part in sorted({part
                                for block in view.masks
                                for part in block})]
    num_blocks = max(len(view.masks) for view in views)
    fig = Figure(figsize=(1.6 * (num_blocks + 1), 1.8 * len(rows)))
    axes = fig.subplots(len(rows), num_blocks + 1, squeeze=False)
    for row, (view, part) in enumerate(rows):
        height, width = view.image.shape[:2]
        axes[row, 0].imshow(view.image)
        axes[row, 0].set_title(' '.join(filter(None, [view.label, 'input'])), fontsize=8)
        for col, block in enumerate(view.masks, start=1):
            ax = axes[row, col]
            ax.imshow(view.image)
            if part in block:
                # Soft top-k masks carry weights in (0, 1]: any nonzero entry runs the part.
                active = (block[part] != 0).reshape(view.grid).float().numpy()
                shade = np.zeros((*view.grid, 4))
                shade[..., 0] = 1.0  # red
                shade[..., 3] = 0.55 * (1 - active)
                # Pixel centres sit on integers: a patch grid of G patches spans
                # -0.5 .. G * patch_size - 0.5.
                ax.imshow(
                    shade,
                    interpolation='nearest',
                    extent=(-0.5, view.grid[1] * patch_size - 0.5, view.grid[0] * patch_size - 0.5,
                            -0.5))
                ax.set_xlim(-0.5, width - 0.5)
                ax.set_ylim(height - 0.5, -0.5)
                ax.set_title(f'block {col - 1} {part}: {active.mean():.0%} active', fontsize=8)
    for ax in axes.flat:
        ax.axis('off')
    fig.suptitle(f'{title}: patches shaded red skip the part', fontsize=9)
    fig.tight_layout()
    save_figure_atomically(fig, out_file, dpi=120)
    return fig
