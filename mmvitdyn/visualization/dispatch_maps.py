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


# A skipped patch's pixels: their luma (ITU-R BT.601, per mille) at SKIP_BRIGHTNESS
# percent, with a light grey (HATCH_GREY) line on every HATCH_PERIOD-th diagonal.
LUMA = (299, 587, 114)
SKIP_BRIGHTNESS = 45
HATCH_GREY = 200
HATCH_PERIOD = 6


def shade_skipped(image: np.ndarray, active: np.ndarray, patch_size: int) -> np.ndarray:
    """``image`` (H, W, 3) uint8 with the pixels of skipped patches (``active`` (rows, cols),
    0: skipped; ``patch_size`` pixels) made hatched dark grey: ``(299 R + 587 G + 114 B) *
    45 // 100000``, or 200 where (y + x) % 6 == 0. Active patches and pixels beyond the grid
    stay as they are."""
    height, width = image.shape[:2]
    cover = np.kron(active == 0, np.ones((patch_size, patch_size), bool))[:height, :width]
    skipped = np.zeros((height, width), bool)
    skipped[:cover.shape[0], :cover.shape[1]] = cover
    grey = image.astype(np.int64) @ np.array(LUMA) * SKIP_BRIGHTNESS // 100000
    rows, cols = np.indices((height, width))
    grey[(rows + cols) % HATCH_PERIOD == 0] = HATCH_GREY
    shaded = image.copy()
    shaded[skipped] = grey[skipped, None].astype(np.uint8)
    return shaded


def plot_skip_map(views: List[SkipView], patch_size: int, title: str, out_file: str) -> Figure:
    """Save ``out_file``, a PNG with ``title``: a row per (view, part), the input
    then a panel per block, skipping patches (``patch_size`` pixels) hatched grey
    (:func:`shade_skipped`). ``views`` (list[SkipView]): one, or one per
    sliding-window crop. Returns the figure."""
    rows = [(view, part) for view in views
            for part in sorted({part
                                for block in view.masks
                                for part in block})]
    num_blocks = max(len(view.masks) for view in views)
    fig = Figure(figsize=(1.6 * (num_blocks + 1), 1.8 * len(rows)))
    axes = fig.subplots(len(rows), num_blocks + 1, squeeze=False)
    for row, (view, part) in enumerate(rows):
        axes[row, 0].imshow(view.image, interpolation='nearest')
        axes[row, 0].set_title(' '.join(filter(None, [view.label, 'input'])), fontsize=8)
        for col, block in enumerate(view.masks, start=1):
            ax = axes[row, col]
            if part not in block:
                ax.imshow(view.image, interpolation='nearest')
                continue
            # Soft top-k masks carry weights in (0, 1]: any nonzero entry runs the part.
            active = (block[part] != 0).reshape(view.grid).numpy()
            ax.imshow(shade_skipped(view.image, active, patch_size), interpolation='nearest')
            ax.set_title(f'block {col - 1} {part}: {active.mean():.0%} active', fontsize=8)
    for ax in axes.flat:
        ax.axis('off')
    fig.suptitle(f'{title}: hatched grey patches skip the part', fontsize=9)
    fig.tight_layout()
    save_figure_atomically(fig, out_file, dpi=120)
    return fig
