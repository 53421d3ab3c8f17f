"""Video: an image ViT over a clip's frames and the attentive-pooling head."""
from .attentive_pooling import AttentivePooling
from .attentive_pooling_head import AttentivePoolingHead
from .dyt_video_vit import DyTVideoViT

__all__ = ['AttentivePooling', 'AttentivePoolingHead', 'DyTVideoViT']
