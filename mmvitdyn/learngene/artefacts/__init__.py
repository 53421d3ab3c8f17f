"""Learngene files, one module per kind (ViT, Swin, LeViT; block baselines, TLEG)."""
from .block import BlockLearngene, block_sources, learngene_blocks
from .layers import FFNGroup, LearngeneLayer
from .levit import LeViTBlockLearngene, LeViTLayer, LeViTLearngene, LeViTStage
from .swin import SwinLearngene, SwinStage, WindowLearngeneLayer
from .tleg import TLEGLearngene
from .vit import Learngene

__all__ = [
    'BlockLearngene', 'FFNGroup', 'LeViTBlockLearngene', 'LeViTLayer', 'LeViTLearngene',
    'LeViTStage', 'Learngene', 'LearngeneLayer', 'SwinLearngene', 'SwinStage', 'TLEGLearngene',
    'WindowLearngeneLayer', 'block_sources', 'learngene_blocks'
]
