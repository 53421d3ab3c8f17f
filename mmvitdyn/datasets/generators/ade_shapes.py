"""Drawn street scenes as an ADE20K-layout semantic-segmentation set
(``images/`` and ``annotations/{training,validation}``; docs/data_checks.md)."""
from pathlib import Path
from typing import Dict

import numpy as np
from PIL import Image, ImageDraw

from .atomic import GeneratedSet, write_atomically
from .checks import require_at_least
from .texture import noisy_fill, to_uint8

ADE_SHAPES_ROOT = 'data/ade_shapes'
ADE_SHAPES_CLASSES = ('building', 'sky', 'tree', 'road', 'grass')
# Position of each class in ADE20KDataset.METAINFO['classes'], and its
# palette colour there.
ADE_SHAPES_ADE20K_INDICES = (1, 2, 4, 6, 9)
ADE_SHAPES_PALETTE = [[180, 120, 120], [6, 230, 230], [4, 200, 3], [140, 140, 140], [4, 250, 7]]
# Rendering of each class: RGB colour, shade contrast, noise grid cells and
# per-pixel grain (see texture.noisy_fill).
_STYLES = {
    'building': ((150, 90, 70), 0.15, 8, 4),
    'sky': ((110, 170, 235), 0.1, 2, 2),
    'tree': ((30, 110, 40), 0.5, 16, 10),
    'road': ((90, 90, 95), 0.1, 4, 12),
    'grass': ((110, 190, 60), 0.3, 8, 6),
}
_UNLABELLED_RGB = 20
_SPLITS = {'train': 'training', 'val': 'validation'}


def label_value(name: str) -> int:
    """PNG value of a class: its ADE20K index + 1."""
    return ADE_SHAPES_ADE20K_INDICES[ADE_SHAPES_CLASSES.index(name)] + 1


def draw_labels(rng: np.random.Generator, size: int) -> np.ndarray:
    """A random scene's (size, size) uint8 label map (0 = unlabelled)."""
    canvas = Image.new('L', (size, size), 0)
    draw = ImageDraw.Draw(canvas)
    horizon = int(rng.uniform(0.35, 0.6) * size)
    draw.rectangle([0, 0, size - 1, horizon - 1], fill=label_value('sky'))
    draw.rectangle([0, horizon, size - 1, size - 1], fill=label_value('grass'))
    top, top_half = rng.uniform(0.3, 0.7) * size, rng.uniform(0.02, 0.06) * size
    bottom, bottom_half = (rng.uniform(0.2, 0.8) * size, rng.uniform(0.2, 0.4) * size)
    draw.polygon([(top - top_half, horizon), (top + top_half, horizon),
                  (bottom + bottom_half, size - 1), (bottom - bottom_half, size - 1)],
                 fill=label_value('road'),
                 outline=0)
    for _ in range(int(rng.integers(1, 4))):
        left = rng.uniform(0, 0.8) * size
        width, height = rng.uniform(0.12, 0.3, size=2) * size
        draw.rectangle([left, max(horizon - height, 2), left + width, horizon + 0.03 * size],
                       fill=label_value('building'),
                       outline=0)
    for _ in range(int(rng.integers(1, 3))):
        x = rng.uniform(0.1, 0.9) * size
        y = horizon + rng.uniform(-0.1, 0.05) * size
        radius = rng.uniform(0.06, 0.12) * size
        draw.ellipse([x - radius, y - radius, x + radius, y + radius],
                     fill=label_value('tree'),
                     outline=0)
    return np.asarray(canvas)


def render(rng: np.random.Generator, labels: np.ndarray) -> np.ndarray:
    """(H, W, 3) uint8 RGB image painting each class of a label map."""
    height, width = labels.shape
    image = np.full((height, width, 3), _UNLABELLED_RGB, dtype=np.float32)
    for name, (colour, contrast, cells, grain) in _STYLES.items():
        jittered = np.asarray(colour) * rng.uniform(0.85, 1.15, size=3)
        fill = noisy_fill(rng, height, width, jittered, contrast, cells, grain)
        mask = labels == label_value(name)
        image[mask] = fill[mask]
    period = max(4, height // 20)
    rows, cols = np.indices(labels.shape) % period
    windows = (rows < period // 2) & (cols < period // 2)
    image[windows & (labels == label_value('building'))] *= 0.45
    return to_uint8(image)


def generate_ade_shapes(out_dir: str = ADE_SHAPES_ROOT,
                        image_size: int = 128,
                        num_train: int = 48,
                        num_val: int = 16,
                        seed: int = 0,
                        overwrite: bool = False) -> GeneratedSet:
    """Write the ADE shapes set; returns the :class:`GeneratedSet`.

    Args:
        out_dir (str): Data root. Defaults to ``'data/ade_shapes'``.
        image_size (int): Side of the square images, >= 32. Defaults to 128.
        num_train, num_val (int): Images per split, >= 1. Defaults to 48, 16.
        seed (int): Seed. Defaults to 0.
        overwrite (bool): Replace an existing ``out_dir``. Defaults to False.
    """
    require_at_least(32, image_size=image_size)
    require_at_least(1, num_train=num_train, num_val=num_val)
    params = dict(image_size=image_size, num_train=num_train, num_val=num_val, seed=seed)
    counts = dict(train=num_train, val=num_val)

    def write(root: Path) -> Dict[str, int]:
        for split_index, (split, folder) in enumerate(_SPLITS.items()):
            (root / 'images' / folder).mkdir(parents=True)
            (root / 'annotations' / folder).mkdir(parents=True)
            for index in range(counts[split]):
                rng = np.random.default_rng((seed, split_index, index))
                labels = draw_labels(rng, image_size)
                stem = f'shapes_{folder}_{index:06d}'
                Image.fromarray(render(rng, labels)).save(
                    root / 'images' / folder / f'{stem}.jpg', quality=95)
                Image.fromarray(labels).save(root / 'annotations' / folder / f'{stem}.png')
        return counts

    return write_atomically(out_dir, 'ade_shapes/1', params, write, overwrite)
