"""Data sets: the generated defaults, data-root checks and the ``FileChecked*``
data sets (imported with their library on first use)."""
from ..lazy_registry import lazy_exports
from .annotation_checks import AnnotationError, CheckClassLabels, CheckCocoRecords, CheckSegLabels
from .data_roots import check_data_roots, data_paths
from .file_errors import DataFileError, NameFilesOnError
from .generators import (GENERATORS, GeneratedSet, generate_ade_shapes, generate_coco_shapes,
                         generate_digits, generate_video_shapes)

__getattr__ = lazy_exports(__name__)

__all__ = [
    'AnnotationError', 'CheckClassLabels', 'CheckCocoRecords', 'CheckSegLabels', 'DataFileError',
    'GENERATORS', 'GeneratedSet', 'NameFilesOnError', 'check_data_roots', 'data_paths',
    'generate_ade_shapes', 'generate_coco_shapes', 'generate_digits', 'generate_video_shapes'
]
