from .dyt_vit import DyTViT
from .dyt_vitdet import DyTViTDet
from .vit import ViT

__all__ = ['DyTViT', 'DyTViTDet', 'ViT']
