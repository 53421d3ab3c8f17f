"""Hand-written digits as an image-classification folder set.

scikit-learn's ``load_digits`` (1,797 real 8x8 digits, values 0..16) is
upsampled to ``size`` x ``size`` RGB PNGs in mmpretrain ``CustomDataset``
layout, with a seeded split stratified per class::

    out_dir/train/<class>/<index>.png
    out_dir/val/<class>/<index>.png
    out_dir/meta/classes.txt
"""
from pathlib import Path
from typing import Dict, Optional

import numpy as np
from PIL import Image

from .atomic import GeneratedSet, write_atomically
from .checks import require_at_least

DIGITS_ROOT = 'data/digits'
DIGITS_CLASSES = tuple(str(digit) for digit in range(10))


def split_per_class(labels: np.ndarray,
                    val_fraction: float,
                    rng: np.random.Generator,
                    max_per_class: Optional[int] = None) -> Dict[str, np.ndarray]:
    """Stratified train/val split of sample indices.

    Each class keeps at most ``max_per_class`` random samples, of which
    ``round(val_fraction * n)`` go to val, but at least one to each split.

    Args:
        labels (np.ndarray): (N,) integer class per sample.

    Returns:
        dict[str, np.ndarray]: ``'train'`` and ``'val'`` sorted indices.
    """
    splits = {'train': [], 'val': []}
    for label in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == label))
        members = members[:max_per_class]
        num_val = min(max(1, round(val_fraction * len(members))), len(members) - 1)
        splits['val'].append(members[:num_val])
        splits['train'].append(members[num_val:])
    return {name: np.sort(np.concatenate(parts)) for name, parts in splits.items()}


def generate_digits(out_dir: str = DIGITS_ROOT,
                    size: int = 32,
                    val_fraction: float = 0.2,
                    seed: int = 0,
                    max_per_class: Optional[int] = None,
                    overwrite: bool = False) -> GeneratedSet:
    """Write the digits set (about 1,438 train / 359 val images).

    Args:
        out_dir (str): Data root. Defaults to ``'data/digits'``.
        size (int): Side of the square RGB images, >= 8. Defaults to 32.
        val_fraction (float): Share of each class put in val, in (0, 1).
            Defaults to 0.2.
        seed (int): Seed of the split. Defaults to 0.
        max_per_class (int, optional): Use at most this many digits of each
            class (>= 2); None uses all. Defaults to None.
        overwrite (bool): Replace an existing ``out_dir``. Defaults to False.

    Returns:
        GeneratedSet: The data root and images per split.
    """
    require_at_least(8, size=size)
    if not 0 < val_fraction < 1:
        raise ValueError(f'val_fraction must be in (0, 1), got {val_fraction}')
    if max_per_class is not None:
        require_at_least(2, max_per_class=max_per_class)
    params = dict(size=size, val_fraction=val_fraction, seed=seed, max_per_class=max_per_class)

    def write(root: Path) -> Dict[str, int]:
        # Imported here so that importing mmvitdyn does not load scikit-learn.
        from sklearn.datasets import load_digits
        digits = load_digits()
        pixels = np.rint(digits.images * (255 / 16)).astype(np.uint8)
        splits = split_per_class(digits.target, val_fraction, np.random.default_rng(seed),
                                 max_per_class)
        for split, indices in splits.items():
            for name in DIGITS_CLASSES:
                (root / split / name).mkdir(parents=True)
            for index in indices:
                image = Image.fromarray(pixels[index]).resize(
                    (size, size), Image.Resampling.BILINEAR).convert('RGB')
                name = DIGITS_CLASSES[digits.target[index]]
                image.save(root / split / name / f'{index:04d}.png')
        (root / 'meta').mkdir()
        (root / 'meta' / 'classes.txt').write_text('\n'.join(DIGITS_CLASSES) + '\n')
        return {split: len(indices) for split, indices in splits.items()}

    return write_atomically(out_dir, 'digits/1', params, write, overwrite)
