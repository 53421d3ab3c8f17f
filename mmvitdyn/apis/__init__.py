"""High-level entry points, as OpenMMLab's ``apis`` packages keep them."""
from .inference import DetectionInferencer, SegmentationInferencer, build_inferencer
from .model import init_model

__all__ = ['DetectionInferencer', 'SegmentationInferencer', 'build_inferencer', 'init_model']
