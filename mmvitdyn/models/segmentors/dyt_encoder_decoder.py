"""Encoder-decoder segmentor trained with DyT's losses."""
from mmengine.registry import MODELS
from mmseg.models.segmentors import EncoderDecoder

from ..dyt_dense_losses import DyTDenseLossMixin


@MODELS.register_module()
class DyTEncoderDecoder(DyTDenseLossMixin, EncoderDecoder):
    """mmseg's ``EncoderDecoder``, DyT backbone; :class:`DyTDenseLossMixin` arguments."""
