from .adapter_vit import AdapterViT
from .dynamicvit import DynamicViT
from .dyt_vit import DyTViT
from .dyt_vitdet import DyTViTDet
from .vit import ViT

__all__ = ['AdapterViT', 'DyTViT', 'DyTViTDet', 'DynamicViT', 'ViT']
