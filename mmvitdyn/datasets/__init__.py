"""Data sets: the generated defaults and checks of configured data roots."""
from .data_roots import check_data_roots
from .generators import (GENERATORS, GeneratedSet, generate_ade_shapes,
                         generate_coco_shapes, generate_digits)

__all__ = [
    'GENERATORS', 'GeneratedSet', 'check_data_roots', 'generate_ade_shapes',
    'generate_coco_shapes', 'generate_digits'
]
