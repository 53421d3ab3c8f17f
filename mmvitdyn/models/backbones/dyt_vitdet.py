"""DyT on ViTDet's plain backbone."""
from mmengine.registry import MODELS

from .dyt_vit import DyTViT
from .vitdet import TunedViTDetRecipe


@MODELS.register_module()
class DyTViTDet(TunedViTDetRecipe, DyTViT):
    """DyT on ViTDet's backbone (MLP dispatch; attention dispatch raises)."""
    OBJECTIVE_MODELS = ('DyTMaskRCNN', 'DyTEncoderDecoder')
