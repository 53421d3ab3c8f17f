from .dyt_classifier import DyTImageClassifier

__all__ = ['DyTImageClassifier']
