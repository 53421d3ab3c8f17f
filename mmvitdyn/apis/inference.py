"""OpenMMLab inferencers whose model is built as the Runner builds it (:func:`init_model`),
with the config's class names where a checkpoint has none (docs/design_notes.md)."""
from typing import Optional

import numpy as np
from mmdet.apis import DetInferencer
from mmengine.logging import MMLogger
from mmengine.registry import DATASETS
from mmengine.runner.checkpoint import _load_checkpoint, _load_checkpoint_to_model
from mmpretrain.apis import ImageClassificationInferencer
from mmseg.apis import MMSegInferencer
from torch import nn

from ..engine.class_counts import head_class_counts, inner_dataset
from .model import init_model


def config_dataset_meta(cfg, source: str) -> dict:
    """``dict(classes=tuple[str], palette=list of (R, G, B))`` of the config's test data set,
    for a model whose checkpoint (``source``) holds none; classes numbered from the head's
    ``num_classes`` when the data set names none. ``ValueError`` when neither counts them."""
    _, test_set = inner_dataset(cfg.test_dataloader.dataset)
    metainfo = dict(test_set.get('metainfo') or {})
    if test_set.get('classes') is not None:
        metainfo.setdefault('classes', test_set.classes)
    with DATASETS.switch_scope_and_registry(cfg.get('default_scope')) as registry:
        dataset_cls = registry.get(test_set.type)
    meta = dataset_cls._load_metainfo(metainfo) if hasattr(dataset_cls, '_load_metainfo') \
        else metainfo
    classes = meta.get('classes')
    if not classes:
        heads = head_class_counts(cfg)
        if not heads:
            raise ValueError(f'{source} holds no class names (meta.dataset_meta), and neither '
                             "the config's test data set nor its model names a class count")
        num_classes = heads[0][1]
        classes = tuple(str(i) for i in range(num_classes))
        MMLogger.get_current_instance().warning(
            f'{source} holds no class names (meta.dataset_meta) and the config\'s test data set '
            f'names none: classes are shown as their numbers 0..{num_classes - 1}; set '
            'test_dataloader.dataset.metainfo.classes to name them')
    palette = meta.get('palette')
    if palette is None or len(palette) != len(classes):
        palette = np.random.default_rng(0).integers(0, 256, (len(classes), 3)).tolist()
    return dict(classes=tuple(classes), palette=[tuple(c) for c in palette])


class _RunnerBuiltModel:
    """Mixin for mmengine ``BaseInferencer`` subclasses: build with ``init_model``."""

    def _init_model(self, cfg, weights: Optional[str], device: str = 'cpu') -> nn.Module:
        model = init_model(cfg, device=device)
        checkpoint = None if weights is None else _load_checkpoint(weights, map_location='cpu')
        meta = (checkpoint or {}).get('meta', {})
        if checkpoint is not None and 'dataset_meta' not in meta and 'CLASSES' not in meta:
            _load_checkpoint_to_model(model, checkpoint)
            model.dataset_meta = config_dataset_meta(cfg, f'checkpoint {weights}')
        else:
            self._load_weights_to_model(model, checkpoint, cfg)
        return model.to(device).eval()


class DetectionInferencer(_RunnerBuiltModel, DetInferencer):
    """mmdet's ``DetInferencer`` on a model built by ``init_model``."""


class SegmentationInferencer(_RunnerBuiltModel, MMSegInferencer):
    """mmseg's ``MMSegInferencer`` on a model built by ``init_model``."""


def build_inferencer(cfg, checkpoint: str, device: str = 'cpu'):
    """The inferencer of ``cfg.default_scope`` (mmpretrain, mmdet or mmseg) for the loaded
    config ``cfg`` and the trained weights ``checkpoint`` on ``device``."""
    scope = cfg.get('default_scope')
    if scope == 'mmpretrain':
        model = init_model(cfg, checkpoint, device)
        if not getattr(model, 'dataset_meta', {}).get('classes'):
            model.dataset_meta = config_dataset_meta(cfg, f'checkpoint {checkpoint}')
        model._config = cfg  # where mmpretrain's inferencers read the config from
        return ImageClassificationInferencer(
            model, pretrained=False, device=device, classes=model.dataset_meta['classes'])
    if scope == 'mmdet':
        return DetectionInferencer(cfg, checkpoint, device=device, show_progress=False)
    if scope == 'mmseg':
        return SegmentationInferencer(cfg, checkpoint, device=device)
    raise ValueError(f"default_scope={scope!r} has no inferencer; use one of "
                     "['mmpretrain', 'mmdet', 'mmseg']")
