"""mmpretrain's QuickGELU (``x * sigmoid(1.702 x)``) in mmengine's root registry."""
from mmengine.registry import MODELS
from mmpretrain.models.utils.clip_generator_helper import QuickGELU

MODELS.register_module(module=QuickGELU)

__all__ = ['QuickGELU']
