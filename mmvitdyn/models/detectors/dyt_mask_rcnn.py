"""Mask R-CNN trained with DyT's losses."""
from mmdet.models.detectors import MaskRCNN
from mmengine.registry import MODELS

from ..dyt_dense_losses import DyTDenseLossMixin


@MODELS.register_module()
class DyTMaskRCNN(DyTDenseLossMixin, MaskRCNN):
    """mmdet's ``MaskRCNN``, DyT backbone; :class:`DyTDenseLossMixin` arguments."""
