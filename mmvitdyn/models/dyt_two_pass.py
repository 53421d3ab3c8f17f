"""DyT's two-pass objective for models with one logit tensor per sample
(image classifiers, video recognisers)."""
import contextlib
from typing import Dict, List, Optional

import torch
import torch.nn.functional as F
from mmengine.optim import OptimWrapper
from torch import nn

from ..utils import check_number
from .dyt_objective import DyTObjectiveMixin


def backward_now(optim_wrapper: OptimWrapper, loss: torch.Tensor) -> None:
    """Back-propagate one part of an iteration's loss now, freeing its graph; the
    iteration still counts once.

    Raises:
        TypeError: ``optim_wrapper`` is not an mmengine ``OptimWrapper``.
    """
    if not isinstance(optim_wrapper, OptimWrapper):
        raise TypeError(f'optim_wrapper is a {type(optim_wrapper).__name__}: the two-pass step '
                        'back-propagates its first pass through OptimWrapper.scale_loss and '
                        'OptimWrapper.backward; use an OptimWrapper (AmpOptimWrapper, '
                        'ApexOptimWrapper, ...)')
    count = optim_wrapper._inner_count
    optim_wrapper.backward(optim_wrapper.scale_loss(loss))
    optim_wrapper._inner_count = count


def symmetric_kl(logits: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """``(KL(sg(q) || p) + KL(sg(p) || q)) / 2`` of two logit tensors (B,
    num_classes), summed over classes, averaged over the batch, in float32."""
    log_p = F.log_softmax(logits.float(), dim=-1)
    log_q = F.log_softmax(other.float(), dim=-1)
    return 0.5 * (
        F.kl_div(log_p, log_q.detach(), reduction='batchmean', log_target=True) +
        F.kl_div(log_q, log_p.detach(), reduction='batchmean', log_target=True))


class DyTTwoPassMixin(DyTObjectiveMixin):
    """DyT's two-pass training objective for a model with one logit tensor (B,
    num_classes) per batch (docs/design_notes.md). Put it before the OpenMMLab
    model class; the subclass gives :meth:`logits` and :meth:`task_loss`.

    Args:
        complete_loss (bool): Add CE of the complete pass. Defaults to True.
        distill_loss (bool): Add the KL distillation term. Defaults to True.
        rate_loss_weight (float): Weight of the activation-rate loss; 0 turns
            it off. Defaults to 2.
        consistency_loss_weight (float): Weight (>= 0) of the symmetric KL
            between two dynamic passes; 0 turns it off. Defaults to 0.
        **kwargs: Arguments of :class:`DyTObjectiveMixin` and of the model class.
    """

    def __init__(self,
                 *args,
                 complete_loss: bool = True,
                 distill_loss: bool = True,
                 consistency_loss_weight: float = 0.0,
                 **kwargs):
        super().__init__(*args, complete_loss=complete_loss, distill_loss=distill_loss, **kwargs)
        check_number(consistency_loss_weight, 'consistency_loss_weight', 0)
        self.consistency_loss_weight = consistency_loss_weight

    def logits(self, inputs: torch.Tensor) -> torch.Tensor:
        """Logits (B, num_classes) of a batch through backbone and head."""
        raise NotImplementedError

    def task_loss(self, logits: torch.Tensor, data_samples: List) -> torch.Tensor:
        """The head's loss of ``logits`` it computed, against ``data_samples``."""
        raise NotImplementedError

    @property
    def needs_complete_pass(self) -> bool:
        return self.dispatching and (self.complete_loss or self.distill_loss)

    def complete_logits(self, inputs: torch.Tensor) -> torch.Tensor:
        """Logits (B, num_classes) with every token through every block part."""
        with self.backbone.complete_mode():
            return self.logits(inputs)

    def dynamic_losses(self, inputs: torch.Tensor, data_samples: List,
                       teacher: Optional[torch.Tensor]) -> Dict[str, torch.Tensor]:
        """Losses of the dynamic pass (and of its consistency with a second
        one), plus activation rates to log."""
        logits = self.logits(inputs)
        losses = {'loss_cls': self.task_loss(logits, data_samples)}
        if self.dispatching:
            if self.distill_loss and teacher is not None:
                losses['loss_distill'] = F.kl_div(
                    F.log_softmax(logits, dim=-1),
                    F.softmax(teacher, dim=-1),
                    reduction='batchmean')
            losses.update(self.rate_terms())
        if self.consistency_loss_weight > 0:
            second = self.logits(inputs)
            losses['loss_consistency'] = self.consistency_loss_weight * symmetric_kl(logits, second)
        return losses

    def forward(self,
                inputs: torch.Tensor,
                data_samples: Optional[List] = None,
                mode: str = 'tensor',
                teacher: Optional[torch.Tensor] = None):
        """The model's modes, plus 'complete' (logits (B, num_classes)) and
        'dynamic_loss' (the dict of :meth:`dynamic_losses`, given ``teacher``)."""
        if mode == 'complete':
            return self.complete_logits(inputs)
        if mode == 'dynamic_loss':
            return self.dynamic_losses(inputs, data_samples, teacher)
        return super().forward(inputs, data_samples, mode)

    def loss(self, inputs: torch.Tensor, data_samples: List) -> dict:
        """All DyT losses in one graph (the same gradients as :meth:`train_step`,
        with both passes' graphs held at once)."""
        losses = {}
        teacher = None
        if self.needs_complete_pass:
            complete = self.complete_logits(inputs)
            if self.complete_loss:
                losses['loss_cls_complete'] = self.task_loss(complete, data_samples)
            teacher = complete.detach()
        losses.update(self.dynamic_losses(inputs, data_samples, teacher))
        return losses

    def train_step(self, data, optim_wrapper: OptimWrapper) -> Dict[str, torch.Tensor]:
        """One DyT step: complete pass back-propagated first, then the dynamic pass."""
        return self.two_pass_step(data, optim_wrapper, self)

    def two_pass_step(self, data, optim_wrapper: OptimWrapper,
                      caller: nn.Module) -> Dict[str, torch.Tensor]:
        """The training step: ``data`` a batch, ``optim_wrapper`` counts it once,
        ``caller`` this model or its DDP wrapper (the complete pass then under
        ``no_sync()``) runs both forwards. Returns the dict of losses and rates."""
        first_pass = getattr(caller, 'no_sync', contextlib.nullcontext)
        logged = {}
        with optim_wrapper.optim_context(caller):
            data = self.data_preprocessor(data, True)
            inputs, data_samples = data['inputs'], data['data_samples']
            teacher = None
            if self.needs_complete_pass:
                with first_pass(), torch.set_grad_enabled(self.complete_loss):
                    complete = caller(inputs, mode='complete')
                    if self.complete_loss:
                        loss_complete = self.task_loss(complete, data_samples)
                        backward_now(optim_wrapper, loss_complete)
                        logged['loss_cls_complete'] = loss_complete.detach()
                teacher = complete.detach()
                del complete
            losses = caller(inputs, data_samples, mode='dynamic_loss', teacher=teacher)
        parsed, log_vars = self.parse_losses(losses)
        optim_wrapper.update_params(parsed)
        log_vars.update(logged)
        if 'loss_cls_complete' in logged:
            log_vars['loss'] = log_vars['loss'] + logged['loss_cls_complete']
        return log_vars
