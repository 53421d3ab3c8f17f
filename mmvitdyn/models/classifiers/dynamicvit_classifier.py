"""Image classifier trained with DynamicViT's losses."""
from typing import List, Sequence

import torch
import torch.nn.functional as F
from mmengine.registry import MODELS
from mmpretrain.models import ImageClassifier
from mmpretrain.structures import DataSample

from ..backbones import DynamicViT
from .head_loss import head_loss

# How the final patch tokens are distilled: MSE (the official DeiT runs) or KL.
TOKEN_DISTILL = ('mse', 'kl')


def ratio_loss(decisions: Sequence[torch.Tensor], targets: Sequence[float]) -> torch.Tensor:
    """``mean_k mean_b (mean_n D_k[b, n] - rho_k)^2`` over stages k, images b:
    decisions D_k (B, N), targets rho_k."""
    terms = [((d.mean(1) - t)**2).mean() for d, t in zip(decisions, targets)]
    return torch.stack(terms).mean()


def token_distill_loss(tokens: torch.Tensor, teacher: torch.Tensor, keep: torch.Tensor,
                       kind: str) -> torch.Tensor:
    """Distance ('mse' or 'kl' over channels) of the kept tokens (B, N, C) to the
    teacher's, ``keep`` (B, N); zero when nothing is kept."""
    kept = keep.detach() > 0.5
    if not bool(kept.any()):
        return tokens.sum() * 0
    student, target = tokens[kept], teacher[kept]
    if kind == 'mse':
        return (student - target).pow(2).mean()
    return F.kl_div(
        F.log_softmax(student, -1),
        F.log_softmax(target, -1),
        reduction='batchmean',
        log_target=True)


@MODELS.register_module()
class DynamicViTClassifier(ImageClassifier):
    """ImageClassifier with DynamicViT's official loss; the teacher is the model's
    own complete pass (docs/design_notes.md).

    Args:
        rate_loss_weight (float): Weight of the keep-ratio loss. Defaults to 2.
        distill_loss (bool): Add the distillation terms. Defaults to True.
        distill_weight (float): Their weight. Defaults to 0.5.
        token_distill (str): 'mse' (default) or 'kl'.
        complete_loss (bool): Also train the complete pass with CE. Defaults to False.
        **kwargs: Arguments of mmpretrain's ``ImageClassifier``; the backbone
            must be a :class:`DynamicViT`.
    """

    def __init__(self,
                 *args,
                 rate_loss_weight: float = 2.0,
                 distill_loss: bool = True,
                 distill_weight: float = 0.5,
                 token_distill: str = 'mse',
                 complete_loss: bool = False,
                 **kwargs):
        super().__init__(*args, **kwargs)
        if not isinstance(self.backbone, DynamicViT):
            raise TypeError(f'{type(self).__name__} needs a DynamicViT backbone, got '
                            f'{type(self.backbone).__name__}')
        self.backbone.attach_objective(type(self).__name__)
        if rate_loss_weight < 0:
            raise ValueError(f'rate_loss_weight={rate_loss_weight} must be >= 0')
        if distill_weight < 0:
            raise ValueError(f'distill_weight={distill_weight} must be >= 0')
        if token_distill not in TOKEN_DISTILL:
            raise ValueError(f'token_distill={token_distill!r} is not one of {TOKEN_DISTILL}')
        self.rate_loss_weight = rate_loss_weight
        self.distill_loss = distill_loss
        self.distill_weight = distill_weight
        self.token_distill = token_distill
        self.complete_loss = complete_loss

    def _patch_tokens(self) -> torch.Tensor:
        return self.backbone.last_tokens[:, self.backbone.num_prefix_tokens:]

    def loss(self, inputs: torch.Tensor, data_samples: List[DataSample]) -> dict:
        """Losses of one batch (and the kept fractions per stage, logged)."""
        losses = {}
        teacher_logits = teacher_tokens = None
        if self.complete_loss or self.distill_loss:
            with torch.set_grad_enabled(self.complete_loss), self.backbone.complete_mode():
                teacher_logits = self.head(self.extract_feat(inputs))
                teacher_tokens = self._patch_tokens().detach()
            if self.complete_loss:
                losses['loss_cls_complete'] = head_loss(self.head, teacher_logits, data_samples)
            teacher_logits = teacher_logits.detach()
        logits = self.head(self.extract_feat(inputs))
        losses['loss_cls'] = head_loss(self.head, logits, data_samples)
        decisions = self.backbone.decisions
        targets = [self.backbone.base_rate**(k + 1) for k in range(len(decisions))]
        if self.rate_loss_weight > 0:
            losses['loss_ratio'] = self.rate_loss_weight * ratio_loss(decisions, targets)
        if self.distill_loss:
            losses['loss_distill_cls'] = self.distill_weight * F.kl_div(
                F.log_softmax(logits, -1),
                F.log_softmax(teacher_logits, -1),
                reduction='batchmean',
                log_target=True)
            losses['loss_distill_token'] = self.distill_weight * token_distill_loss(
                self._patch_tokens(), teacher_tokens, decisions[-1], self.token_distill)
        losses.update({f'keep_rate/{k}': d.detach().mean() for k, d in enumerate(decisions)})
        return losses
