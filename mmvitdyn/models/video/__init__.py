"""Video: an image ViT over a clip's frames and the attentive-pooling head
(an mmaction2 head, imported with mmaction2 on first use)."""
from ...lazy_registry import lazy_exports
from .attentive_pooling import AttentivePooling
from .dyt_video_vit import DyTVideoViT

__getattr__ = lazy_exports(__name__)

__all__ = ['AttentivePooling', 'DyTVideoViT']
