"""Image classifier trained with DyT's losses."""
from typing import List

import torch
from mmengine.registry import MODELS
from mmpretrain.models import ImageClassifier
from mmpretrain.structures import DataSample

from ..dyt_two_pass import DyTTwoPassMixin
from .head_loss import head_loss


@MODELS.register_module()
class DyTImageClassifier(DyTTwoPassMixin, ImageClassifier):
    """mmpretrain's ImageClassifier trained by :class:`DyTTwoPassMixin` (whose
    arguments it takes, with ``ImageClassifier``'s) over the head's logits."""

    def logits(self, inputs: torch.Tensor) -> torch.Tensor:
        """Logits (B, num_classes) of images (B, C, H, W)."""
        return self.head(self.extract_feat(inputs))

    def task_loss(self, logits: torch.Tensor, data_samples: List[DataSample]) -> torch.Tensor:
        """The head's loss of ``logits`` (:func:`head_loss`)."""
        return head_loss(self.head, logits, data_samples)
