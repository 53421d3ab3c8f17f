"""Video recogniser trained with DyT's losses."""
from typing import List

import torch
from mmaction.models.recognizers import Recognizer3D
from mmaction.structures import ActionDataSample
from mmengine.registry import MODELS

from ..dyt_two_pass import DyTTwoPassMixin


@MODELS.register_module()
class DyTRecognizer3D(DyTTwoPassMixin, Recognizer3D):
    """mmaction2's Recognizer3D with Dynamic Tuning's training objective: the
    two-pass step of :class:`DyTTwoPassMixin` over the clip scores of its
    ``cls_head``, on clips (B, 1, C, T, H, W) of a ``NCTHW`` pipeline, one
    clip per sample in training (docs/video.md). Testing is Recognizer3D's
    (several views per sample, averaged by the head's ``average_clips``).

    Args:
        **kwargs: The objective's arguments (:class:`DyTTwoPassMixin`:
            ``complete_loss``, ``distill_loss``, ``rate_loss_weight``,
            ``consistency_loss_weight``, ...) and mmaction2's
            ``Recognizer3D``'s (``backbone``: a :class:`DyTVideoViT` or
            another DynamicBackbone; ``cls_head``: e.g.
            :class:`AttentivePoolingHead`; ``data_preprocessor``, ...).
    """

    def logits(self, inputs: torch.Tensor) -> torch.Tensor:
        """Scores (B * clips, num_classes) of clips (B, clips, C, T, H, W)."""
        return self.cls_head(self.extract_feat(inputs)[0])

    def task_loss(self, logits: torch.Tensor, data_samples: List[ActionDataSample]) -> torch.Tensor:
        """The head's classification loss of ``logits`` (its ``loss_by_feat``)."""
        return self.cls_head.loss_by_feat(logits, data_samples)['loss_cls']
