"""mmdet's ``CocoDataset`` with named file and annotation errors."""
from mmdet.datasets import CocoDataset
from mmengine.registry import DATASETS

from .annotation_checks import CheckCocoRecords
from .file_errors import NameFilesOnError


@DATASETS.register_module()
class FileCheckedCocoDataset(CheckCocoRecords, NameFilesOnError, CocoDataset):
    """mmdet's ``CocoDataset`` whose errors name unreadable files and
    unusable annotations (:class:`CheckCocoRecords`)."""
