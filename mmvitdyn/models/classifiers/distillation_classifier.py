"""Image classifier trained against a frozen teacher classifier (DeiT's distillation)."""
from typing import Dict, List

import torch
import torch.nn.functional as F
from mmengine.registry import MODELS
from mmpretrain.models import ImageClassifier
from mmpretrain.structures import DataSample

from ...utils import check_number
from .head_loss import head_loss

DISTILLATION_TYPES = ('soft', 'hard')


def distillation_loss(logits: torch.Tensor, teacher: torch.Tensor, distillation_type: str,
                      tau: float) -> torch.Tensor:
    """Distillation term (float32) of student and teacher logits (B, K): 'soft'
    (temperature-scaled KL) or 'hard' (CE against the teacher's argmax)."""
    logits, teacher = logits.float(), teacher.float()
    if distillation_type == 'hard':
        return F.cross_entropy(logits, teacher.argmax(dim=-1))
    kl = F.kl_div(
        F.log_softmax(logits / tau, dim=-1),
        F.log_softmax(teacher / tau, dim=-1),
        reduction='sum',
        log_target=True)
    return kl * tau * tau / logits.numel()


@MODELS.register_module()
class DistillationImageClassifier(ImageClassifier):
    """ImageClassifier trained on ``(1 - alpha) * loss_cls + alpha * loss_distill``
    against a frozen teacher classifier (docs/design_notes.md).

    Args:
        teacher (dict): Config of a classifier whose ``forward(inputs,
            mode='tensor')`` gives logits (B, K) of the student's K classes.
        distillation_type (str): 'soft' or 'hard'. Defaults to 'soft'.
        alpha (float): Weight of the distillation term, in [0, 1]. Defaults to 0.5.
        tau (float): Temperature of the soft term (> 0). Defaults to 1.0.
        **kwargs: Arguments of mmpretrain's ``ImageClassifier`` (the student).

    Raises:
        ValueError: A setting is out of range, or the teacher's class count differs.
    """

    def __init__(self,
                 teacher: dict,
                 distillation_type: str = 'soft',
                 alpha: float = 0.5,
                 tau: float = 1.0,
                 **kwargs):
        super().__init__(**kwargs)
        if distillation_type not in DISTILLATION_TYPES:
            raise ValueError(f'distillation_type={distillation_type!r} is not one of '
                             f'{DISTILLATION_TYPES}')
        self.distillation_type = distillation_type
        self.alpha = check_number(alpha, 'alpha', 0, 1)
        self.tau = check_number(tau, 'tau', 0, low_open=True)
        self.teacher = MODELS.build(teacher)
        classes = (getattr(self.teacher.head, 'num_classes',
                           None), getattr(self.head, 'num_classes', None))
        if None not in classes and classes[0] != classes[1]:
            raise ValueError(f"the teacher predicts {classes[0]} classes, the student's head "
                             f'{classes[1]}')
        self.teacher.requires_grad_(False)
        self.teacher.eval()

    def train(self, mode: bool = True) -> 'DistillationImageClassifier':
        """Set the student's mode; the teacher stays in eval mode."""
        super().train(mode)
        self.teacher.eval()
        return self

    def loss(self, inputs: torch.Tensor, data_samples: List[DataSample]) -> Dict[str, torch.Tensor]:
        """The weighted head loss and distillation term of a batch."""
        logits = self.head(self.extract_feat(inputs))
        with torch.no_grad():
            teacher = self.teacher(inputs, mode='tensor')
        return {
            'loss_cls': (1 - self.alpha) * head_loss(self.head, logits, data_samples),
            'loss_distill':
            self.alpha * distillation_loss(logits, teacher, self.distillation_type, self.tau),
        }
