"""Mask R-CNN trained with DyT's losses."""
from mmdet.models.detectors import MaskRCNN
from mmengine.registry import MODELS

from ..dyt_dense_losses import DyTDenseLossMixin


@MODELS.register_module()
class DyTMaskRCNN(DyTDenseLossMixin, MaskRCNN):
    """mmdet's ``MaskRCNN`` with a DyT backbone: the detection losses plus
    DyT's rate loss and activation rates (see :class:`DyTDenseLossMixin`).

    Args:
        rate_loss_weight (float): Weight of the rate loss. Defaults to 2.
        complete_loss (bool): Add the complete pass's losses. Defaults to False.
        distill_loss (bool): Add feature distillation. Defaults to False.
        **kwargs: Arguments of ``MaskRCNN`` (backbone, neck, rpn_head, ...).
    """
