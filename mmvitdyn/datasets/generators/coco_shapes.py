"""Drawn shapes as a COCO-format instance-segmentation set (docs/data_checks.md)."""
import colorsys
import json
from pathlib import Path
from typing import Dict, List

import numpy as np
from PIL import Image, ImageDraw

from .atomic import GeneratedSet, write_atomically
from .checks import require_at_least
from .texture import noisy_fill, to_uint8

COCO_SHAPES_ROOT = 'data/coco_shapes'
COCO_SHAPES_CLASSES = ('circle', 'square', 'triangle')
COCO_SHAPES_PALETTE = [(220, 20, 60), (0, 130, 230), (250, 170, 30)]
# Vertices of each class's polygon on its circumscribed circle.
_NUM_VERTICES = {'circle': 32, 'square': 4, 'triangle': 3}
_SPLITS = ('train', 'val')


def shape_polygon(name: str, centre: np.ndarray, radius: float, angle: float) -> np.ndarray:
    """(V, 2) x, y vertices (0.01 px) of a shape inscribed in (``centre``, ``radius``)."""
    steps = np.arange(_NUM_VERTICES[name]) * (2 * np.pi / _NUM_VERTICES[name])
    turns = angle + steps
    offsets = np.stack([np.cos(turns), np.sin(turns)], axis=1)
    return np.round(centre + radius * offsets, 2)


def polygon_area(vertices: np.ndarray) -> float:
    """Shoelace area of a simple polygon given as (V, 2) vertices."""
    x, y = vertices[:, 0], vertices[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2)


def place_circles(rng: np.random.Generator,
                  count: int,
                  image_size: int,
                  radius_range: tuple,
                  margin: float = 2.0) -> List[tuple]:
    """Up to ``count`` (at least one) random circles ``margin`` px apart, as
    (centre (2,), radius) tuples."""
    circles = []
    for _ in range(count):
        radius = rng.uniform(*radius_range) * image_size
        for _ in range(100):
            centre = rng.uniform(radius + 1, image_size - radius - 1, size=2)
            if all(np.linalg.norm(centre - other) > radius + r + margin for other, r in circles):
                circles.append((centre, radius))
                break
    return circles


def random_colour(rng: np.random.Generator) -> np.ndarray:
    """A saturated, bright RGB colour in [0, 255]."""
    rgb = colorsys.hsv_to_rgb(rng.random(), rng.uniform(0.6, 1), rng.uniform(0.7, 1))
    return np.array(rgb, dtype=np.float32) * 255


def draw_image(rng: np.random.Generator, image_size: int, max_objects: int) -> tuple:
    """The (S, S, 3) uint8 RGB image and, per shape, (class index, (V, 2) polygon)."""
    background = noisy_fill(
        rng, image_size, image_size, rng.uniform(70, 170, size=3), contrast=0.35, cells=4, grain=0)
    canvas = Image.fromarray(to_uint8(background))
    draw = ImageDraw.Draw(canvas)
    shapes = []
    count = int(rng.integers(1, max_objects + 1))
    for centre, radius in place_circles(rng, count, image_size, (0.08, 0.2)):
        label = int(rng.integers(len(COCO_SHAPES_CLASSES)))
        polygon = shape_polygon(COCO_SHAPES_CLASSES[label], centre, radius,
                                rng.uniform(0, 2 * np.pi))
        colour = tuple(int(c) for c in to_uint8(random_colour(rng)))
        draw.polygon([tuple(point) for point in polygon], fill=colour)
        shapes.append((label, polygon))
    grain = rng.normal(0, 6, (image_size, image_size, 3))
    return to_uint8(np.asarray(canvas, dtype=np.float32) + grain), shapes


def coco_annotation(shape_id: int, image_id: int, label: int, polygon: np.ndarray) -> dict:
    """COCO instance record of one polygon (category ids start at 1)."""
    (x0, y0), (x1, y1) = polygon.min(axis=0), polygon.max(axis=0)
    return dict(
        id=shape_id,
        image_id=image_id,
        category_id=label + 1,
        segmentation=[polygon.ravel().tolist()],
        area=round(polygon_area(polygon), 2),
        bbox=[float(x0), float(y0),
              round(float(x1 - x0), 2),
              round(float(y1 - y0), 2)],
        iscrowd=0)


def generate_coco_shapes(out_dir: str = COCO_SHAPES_ROOT,
                         image_size: int = 128,
                         num_train: int = 48,
                         num_val: int = 16,
                         max_objects: int = 4,
                         seed: int = 0,
                         overwrite: bool = False) -> GeneratedSet:
    """Write the COCO shapes set; returns the :class:`GeneratedSet`.

    Args:
        out_dir (str): Data root. Defaults to ``'data/coco_shapes'``.
        image_size (int): Side of the square images, >= 32. Defaults to 128.
        num_train, num_val (int): Images per split, >= 1. Defaults to 48, 16.
        max_objects (int): Most shapes per image, >= 1. Defaults to 4.
        seed (int): Seed. Defaults to 0.
        overwrite (bool): Replace an existing ``out_dir``. Defaults to False.
    """
    require_at_least(32, image_size=image_size)
    require_at_least(1, num_train=num_train, num_val=num_val, max_objects=max_objects)
    params = dict(
        image_size=image_size,
        num_train=num_train,
        num_val=num_val,
        max_objects=max_objects,
        seed=seed)
    counts = dict(train=num_train, val=num_val)

    def write(root: Path) -> Dict[str, int]:
        (root / 'annotations').mkdir()
        categories = [
            dict(id=label + 1, name=name, supercategory='shape')
            for label, name in enumerate(COCO_SHAPES_CLASSES)
        ]
        for split_index, split in enumerate(_SPLITS):
            folder = f'{split}2017'
            (root / folder).mkdir()
            images, annotations = [], []
            for index in range(counts[split]):
                rng = np.random.default_rng((seed, split_index, index))
                pixels, shapes = draw_image(rng, image_size, max_objects)
                image_id = index + 1
                file_name = f'{index:06d}.jpg'
                Image.fromarray(pixels).save(root / folder / file_name, quality=95)
                images.append(
                    dict(id=image_id, file_name=file_name, height=image_size, width=image_size))
                for label, polygon in shapes:
                    annotations.append(
                        coco_annotation(len(annotations) + 1, image_id, label, polygon))
            coco = dict(
                info=dict(description=f'coco_shapes {split}'),
                licenses=[],
                images=images,
                annotations=annotations,
                categories=categories)
            (root / 'annotations' / f'instances_{folder}.json').write_text(json.dumps(coco))
        return counts

    return write_atomically(out_dir, 'coco_shapes/1', params, write, overwrite)
