"""Seeded generators of the small default data sets; ``GENERATORS`` is their table
(docs/data_checks.md)."""
from typing import Callable, NamedTuple

from .ade_shapes import (ADE_SHAPES_ADE20K_INDICES, ADE_SHAPES_CLASSES, ADE_SHAPES_PALETTE,
                         ADE_SHAPES_ROOT, generate_ade_shapes)
from .atomic import GeneratedSet
from .coco_shapes import (COCO_SHAPES_CLASSES, COCO_SHAPES_PALETTE, COCO_SHAPES_ROOT,
                          generate_coco_shapes)
from .digits import DIGITS_CLASSES, DIGITS_ROOT, generate_digits
from .video_shapes import VIDEO_SHAPES_CLASSES, VIDEO_SHAPES_ROOT, generate_video_shapes


class Generator(NamedTuple):
    """A generated data set: default root, generating function, CLI script."""
    default_root: str
    generate: Callable[..., GeneratedSet]
    script: str

    def command(self, out_dir: str) -> str:
        """The shell command that writes this set to ``out_dir``."""
        return f'python {self.script} --out-dir {out_dir}'


GENERATORS = {
    'digits':
    Generator(DIGITS_ROOT, generate_digits, 'tools/dataset_converters/gen_digits.py'),
    'coco_shapes':
    Generator(COCO_SHAPES_ROOT, generate_coco_shapes,
              'tools/dataset_converters/gen_coco_shapes.py'),
    'ade_shapes':
    Generator(ADE_SHAPES_ROOT, generate_ade_shapes, 'tools/dataset_converters/gen_ade_shapes.py'),
    'video_shapes':
    Generator(VIDEO_SHAPES_ROOT, generate_video_shapes,
              'tools/dataset_converters/gen_video_shapes.py'),
}

__all__ = [
    'ADE_SHAPES_ADE20K_INDICES', 'ADE_SHAPES_CLASSES', 'ADE_SHAPES_PALETTE', 'ADE_SHAPES_ROOT',
    'COCO_SHAPES_CLASSES', 'COCO_SHAPES_PALETTE', 'COCO_SHAPES_ROOT', 'DIGITS_CLASSES',
    'DIGITS_ROOT', 'GENERATORS', 'GeneratedSet', 'Generator', 'VIDEO_SHAPES_CLASSES',
    'VIDEO_SHAPES_ROOT', 'generate_ade_shapes', 'generate_coco_shapes', 'generate_digits',
    'generate_video_shapes'
]
