from .adapter_vit import AdapterViT
from .dynamic_backbone import DynamicBackbone
from .dynamicvit import DynamicViT
from .dyt_vit import DyTViT
from .dyt_vitdet import DyTViTDet
from .linear_expansion_vit import LinearExpansionViT, expansion_coefficients
from .vit import ViT
from .vitdet import AdapterViTDet, TunedViTDetRecipe, ViTDet, ViTDetRecipe

__all__ = [
    'AdapterViT', 'AdapterViTDet', 'DynamicBackbone', 'DyTViT', 'DyTViTDet', 'DynamicViT',
    'LinearExpansionViT', 'TunedViTDetRecipe', 'ViT', 'ViTDet', 'ViTDetRecipe',
    'expansion_coefficients'
]
