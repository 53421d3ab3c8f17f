from .dynamicvit_classifier import DynamicViTClassifier
from .dyt_classifier import DyTImageClassifier

__all__ = ['DyTImageClassifier', 'DynamicViTClassifier']
