"""Ancestry families: what learngene building reads of each kind of ancestry."""
from .base import CENTROIDS, Ancestry, CondenseSettings, ancestry_for
from .swin import SwinAncestry, WindowAttentionDistanceRecorder
from .vit import AttentionDistanceRecorder, ViTAncestry

__all__ = [
    'Ancestry', 'AttentionDistanceRecorder', 'CENTROIDS', 'CondenseSettings', 'SwinAncestry',
    'ViTAncestry', 'WindowAttentionDistanceRecorder', 'ancestry_for'
]
