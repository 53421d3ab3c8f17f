"""Image classifiers on mmpretrain's ``ImageClassifier`` (imported lazily)."""
from ...lazy_registry import lazy_exports

__getattr__ = lazy_exports(__name__)

__all__ = ['DistillationImageClassifier', 'DyTImageClassifier', 'DynamicViTClassifier']
