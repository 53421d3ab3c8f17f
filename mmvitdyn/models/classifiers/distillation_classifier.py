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
    """The distillation term of student logits and teacher logits, both (B, K).

    'soft': ``tau^2 * sum KL(softmax(teacher / tau) || softmax(logits / tau)) / (B * K)``,
    the KL summed over the batch and the classes and divided by the number of
    logits; 'hard': the cross-entropy of ``logits`` against ``teacher.argmax(-1)``.
    Computed in float32.
    """
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
    """ImageClassifier trained with a frozen teacher classifier's predictions::

        L = (1 - alpha) * L_cls(z, y) + alpha * L_distill(z, z_t)

    z are the student's logits, z_t the teacher's on the same inputs (after
    the data preprocessor and its batch augments), computed without gradients
    with the teacher in eval mode; L_cls is the head's loss (logged as
    ``loss_cls``), L_distill is :func:`distillation_loss` (``loss_distill``).
    The teacher is built from its config (loaded by its ``init_cfg`` in
    :meth:`init_weights`), never trains and stays in eval mode; prediction
    and the 'tensor' mode are the student's.

    Args:
        teacher (dict): Config of the teacher, a classifier whose
            ``forward(inputs, mode='tensor')`` gives logits (B, K) of the
            student's K classes (e.g. mmpretrain's ``ImageClassifier`` with
            ``init_cfg=dict(type='Pretrained', checkpoint=...)``).
        distillation_type (str): 'soft' or 'hard'. Defaults to 'soft'.
        alpha (float): Weight of the distillation term, in [0, 1]. Defaults to 0.5.
        tau (float): Temperature of the soft term (> 0). Defaults to 1.0.
        **kwargs: Arguments of mmpretrain's ``ImageClassifier`` (the student).

    Raises:
        ValueError: A setting is out of range, or the teacher predicts
            another number of classes than the student's head (named).
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
