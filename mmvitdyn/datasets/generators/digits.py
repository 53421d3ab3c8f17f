"""scikit-learn's hand-written digits as an image-classification folder set
(docs/data_checks.md)."""
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
    """``'train'`` and ``'val'`` sorted indices of a per-class split of ``labels`` (N,)."""
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
    """Write the digits set; returns the :class:`GeneratedSet`.

    Args:
        out_dir (str): Data root. Defaults to ``'data/digits'``.
        size (int): Side of the square RGB images, >= 8. Defaults to 32.
        val_fraction (float): Share of each class in val, in (0, 1). Defaults to 0.2.
        seed (int): Seed of the split. Defaults to 0.
        max_per_class (int, optional): At most this many digits a class (>= 2).
        overwrite (bool): Replace an existing ``out_dir``. Defaults to False.
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
