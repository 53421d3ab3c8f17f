"""Descendants, one module per family (Swin, LeViT imported with mmpretrain on first use)."""
from ...lazy_registry import lazy_exports
from .vit import INIT_MODES, DyTLearngeneViT, LearngeneViT

__getattr__ = lazy_exports(__name__)

__all__ = ['DyTLearngeneViT', 'INIT_MODES', 'LearngeneViT']
