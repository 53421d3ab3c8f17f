"""Data sets: the generated defaults, data-root checks, and data set classes
whose errors name unreadable files and unusable annotations."""
from .annotation_checks import AnnotationError, CheckClassLabels, CheckCocoRecords, CheckSegLabels
from .data_roots import check_data_roots
from .file_errors import (DataFileError, FileCheckedADE20KDataset, FileCheckedCocoDataset,
                          FileCheckedCustomDataset, NameFilesOnError)
from .generators import (GENERATORS, GeneratedSet, generate_ade_shapes, generate_coco_shapes,
                         generate_digits)

__all__ = [
    'AnnotationError', 'CheckClassLabels', 'CheckCocoRecords', 'CheckSegLabels', 'DataFileError',
    'FileCheckedADE20KDataset', 'FileCheckedCocoDataset', 'FileCheckedCustomDataset', 'GENERATORS',
    'GeneratedSet', 'NameFilesOnError', 'check_data_roots', 'generate_ade_shapes',
    'generate_coco_shapes', 'generate_digits'
]
