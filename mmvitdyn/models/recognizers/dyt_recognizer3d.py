"""Video recogniser trained with DyT's losses."""
from typing import List

import torch
from mmaction.models.recognizers import Recognizer3D
from mmaction.structures import ActionDataSample
from mmengine.registry import MODELS

from ..dyt_two_pass import DyTTwoPassMixin


@MODELS.register_module()
class DyTRecognizer3D(DyTTwoPassMixin, Recognizer3D):
    """mmaction2's Recognizer3D trained by :class:`DyTTwoPassMixin` on clips (B,
    1, C, T, H, W); takes the objective's and ``Recognizer3D``'s arguments."""

    def logits(self, inputs: torch.Tensor) -> torch.Tensor:
        """Scores (B * clips, num_classes) of clips (B, clips, C, T, H, W)."""
        return self.cls_head(self.extract_feat(inputs)[0])

    def task_loss(self, logits: torch.Tensor, data_samples: List[ActionDataSample]) -> torch.Tensor:
        """The head's classification loss of ``logits`` (its ``loss_by_feat``)."""
        return self.cls_head.loss_by_feat(logits, data_samples)['loss_cls']
