"""Encoder-decoder segmentor trained with DyT's losses."""
from mmengine.registry import MODELS
from mmseg.models.segmentors import EncoderDecoder

from ..dyt_dense_losses import DyTDenseLossMixin


@MODELS.register_module()
class DyTEncoderDecoder(DyTDenseLossMixin, EncoderDecoder):
    """mmseg's ``EncoderDecoder`` (e.g. UperNet) with a DyT backbone: the
    segmentation losses plus DyT's rate loss and activation rates (see
    :class:`DyTDenseLossMixin`).

    Args:
        rate_loss_weight (float): Weight of the rate loss. Defaults to 2.
        complete_loss (bool): Add the complete pass's losses. Defaults to False.
        distill_loss (bool): Add feature distillation. Defaults to False.
        **kwargs: Arguments of ``EncoderDecoder`` (backbone, neck, decode_head, ...).
    """
