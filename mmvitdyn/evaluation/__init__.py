"""Evaluation metrics (``EmptyAwareCocoMetric``, imported with mmdet lazily)."""
from ..lazy_registry import lazy_exports

__getattr__ = lazy_exports(__name__)

__all__ = []
