"""High-level entry points, as OpenMMLab's ``apis`` packages keep them.

Importing this package adds mmvitdyn's image-classification models to
mmpretrain's ``ModelHub`` (:mod:`.model_index`).
"""
from .inference import DetectionInferencer, SegmentationInferencer, build_inferencer
from .model import init_model
from .model_index import model_index_path, register_models

register_models()

__all__ = [
    'DetectionInferencer', 'SegmentationInferencer', 'build_inferencer', 'init_model',
    'model_index_path', 'register_models'
]
