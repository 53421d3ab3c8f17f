"""mmpretrain's ``CustomDataset`` with named file and label errors."""
from mmengine.registry import DATASETS
from mmpretrain.datasets import CustomDataset

from .annotation_checks import CheckClassLabels
from .file_errors import NameFilesOnError


@DATASETS.register_module()
class FileCheckedCustomDataset(CheckClassLabels, NameFilesOnError, CustomDataset):
    """mmpretrain's ``CustomDataset`` whose errors name unreadable files and
    labels outside the classes (``num_classes``: see :class:`CheckClassLabels`)."""
