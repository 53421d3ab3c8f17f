"""OpenMMLab inferencers whose model is built the way the Runner builds it.

mmpretrain's, mmdet's and mmseg's inferencers build ``cfg.model`` on their
own; the ones here build it with :func:`~mmvitdyn.apis.init_model` (scope,
top-level data preprocessor) and keep each library's own weight loading and
dataset-meta handling (class names, palettes).
"""
from typing import Optional

from mmdet.apis import DetInferencer
from mmengine.runner.checkpoint import _load_checkpoint
from mmpretrain.apis import ImageClassificationInferencer
from mmseg.apis import MMSegInferencer
from torch import nn

from .model import init_model


class _RunnerBuiltModel:
    """Mixin for mmengine ``BaseInferencer`` subclasses: build with ``init_model``."""

    def _init_model(self, cfg, weights: Optional[str], device: str = 'cpu') -> nn.Module:
        model = init_model(cfg, device=device)
        checkpoint = None if weights is None else _load_checkpoint(weights, map_location='cpu')
        self._load_weights_to_model(model, checkpoint, cfg)
        return model.to(device).eval()


class DetectionInferencer(_RunnerBuiltModel, DetInferencer):
    """mmdet's ``DetInferencer`` on a model built by ``init_model``."""


class SegmentationInferencer(_RunnerBuiltModel, MMSegInferencer):
    """mmseg's ``MMSegInferencer`` on a model built by ``init_model``."""


def build_inferencer(cfg, checkpoint: str, device: str = 'cpu'):
    """The inferencer of ``cfg.default_scope`` (mmpretrain, mmdet or mmseg) for ``checkpoint``.

    Args:
        cfg (Config): A loaded config.
        checkpoint (str): The trained weights.
        device (str): Where to run. Defaults to 'cpu'.
    """
    scope = cfg.get('default_scope')
    if scope == 'mmpretrain':
        model = init_model(cfg, checkpoint, device)
        model._config = cfg  # where mmpretrain's inferencers read the config from
        return ImageClassificationInferencer(
            model,
            pretrained=False,
            device=device,
            classes=getattr(model, 'dataset_meta', {}).get('classes'))
    if scope == 'mmdet':
        return DetectionInferencer(cfg, checkpoint, device=device, show_progress=False)
    if scope == 'mmseg':
        return SegmentationInferencer(cfg, checkpoint, device=device)
    raise ValueError(f"default_scope={scope!r} has no inferencer; use one of "
                     "['mmpretrain', 'mmdet', 'mmseg']")
