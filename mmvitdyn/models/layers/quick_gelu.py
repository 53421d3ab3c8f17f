"""QuickGELU (``x * sigmoid(1.702 x)``), the activation of OpenAI's CLIP towers.

mmpretrain's, registered in mmengine's root registry too, so that
``act_cfg=dict(type='QuickGELU')`` builds outside the mmpretrain scope as well.
"""
from mmengine.registry import MODELS
from mmpretrain.models.utils.clip_generator_helper import QuickGELU

MODELS.register_module(module=QuickGELU)

__all__ = ['QuickGELU']
