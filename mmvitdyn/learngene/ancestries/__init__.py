"""Ancestry families (Swin and LeViT imported with mmpretrain on first use)."""
from ...lazy_registry import lazy_exports
from .base import CENTROIDS, Ancestry, CondenseSettings, ancestry_for
from .vit import AttentionDistanceRecorder, ViTAncestry

__getattr__ = lazy_exports(__name__)

__all__ = [
    'Ancestry', 'AttentionDistanceRecorder', 'CENTROIDS', 'CondenseSettings', 'ViTAncestry',
    'ancestry_for'
]
