from .dyt_learngene_vit import DyTLearngeneViT
from .dyt_vit import DyTViT
from .dyt_vitdet import DyTViTDet
from .learngene_vit import LearngeneViT
from .vit import ViT

__all__ = ['DyTLearngeneViT', 'DyTViT', 'DyTViTDet', 'LearngeneViT', 'ViT']
