from .dyt_vit import DyTViT
from .vit import ViT

__all__ = ['DyTViT', 'ViT']
