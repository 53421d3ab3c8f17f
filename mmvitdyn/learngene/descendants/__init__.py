"""Descendants: backbones initialised from a learngene, one module per family."""
from .swin import LearngeneSwin
from .vit import INIT_MODES, DyTLearngeneViT, LearngeneViT

__all__ = ['DyTLearngeneViT', 'INIT_MODES', 'LearngeneSwin', 'LearngeneViT']
