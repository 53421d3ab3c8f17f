"""Learngene files, one module per kind: Cluster-Learngene of a ViT, a Swin
and a LeViT ancestry, the block baselines (Heuristic, Auto) and TLEG."""
from .block import BlockLearngene, block_sources, learngene_blocks
from .layers import FFNGroup, LearngeneLayer
from .levit import LeViTLayer, LeViTLearngene, LeViTStage
from .swin import SwinLearngene, SwinStage, WindowLearngeneLayer
from .tleg import TLEGLearngene
from .vit import Learngene

__all__ = [
    'BlockLearngene', 'FFNGroup', 'LeViTLayer', 'LeViTLearngene', 'LeViTStage', 'Learngene',
    'LearngeneLayer', 'SwinLearngene', 'SwinStage', 'TLEGLearngene', 'WindowLearngeneLayer',
    'block_sources', 'learngene_blocks'
]
