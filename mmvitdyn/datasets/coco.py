"""mmdet's ``CocoDataset`` with named file and annotation errors."""
from mmdet.datasets import CocoDataset
from mmdet.datasets.api_wrappers import COCO
from mmengine.registry import DATASETS

from .annotation_checks import AnnotationError, CheckCocoRecords, coco_file_problem
from .file_errors import NameFilesOnError


class CheckedCOCO(COCO):
    """mmdet's COCO API that refuses a json whose images and annotations
    disagree (:func:`~.annotation_checks.coco_file_problem`), naming the file."""

    def __init__(self, annotation_file=None):
        self.annotation_file = annotation_file
        super().__init__(annotation_file)

    def createIndex(self):  # noqa: N802 (pycocotools' name)
        problem = coco_file_problem(self.dataset)
        if problem:
            raise AnnotationError(f'annotation file {self.annotation_file}: {problem}')
        super().createIndex()


@DATASETS.register_module()
class FileCheckedCocoDataset(CheckCocoRecords, NameFilesOnError, CocoDataset):
    """mmdet's ``CocoDataset`` whose errors name unreadable files and
    unusable annotations (:class:`CheckCocoRecords`)."""
    COCOAPI = CheckedCOCO
