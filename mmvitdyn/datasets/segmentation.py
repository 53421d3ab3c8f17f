"""mmseg's segmentation data sets with named file and label-map errors."""
from mmengine.registry import DATASETS
from mmseg.datasets import ADE20KDataset, BaseSegDataset

from .annotation_checks import CheckSegLabels
from .file_errors import NameFilesOnError


@DATASETS.register_module()
class FileCheckedADE20KDataset(CheckSegLabels, NameFilesOnError, ADE20KDataset):
    """mmseg's ``ADE20KDataset`` with :class:`CheckSegLabels` and named file errors."""


@DATASETS.register_module()
class FileCheckedBaseSegDataset(CheckSegLabels, NameFilesOnError, BaseSegDataset):
    """mmseg's ``BaseSegDataset`` with :class:`CheckSegLabels` and named file errors."""
