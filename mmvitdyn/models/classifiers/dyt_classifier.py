"""Image classifier trained with DyT's losses."""
import contextlib
from typing import Dict, List, Optional

import torch
import torch.nn.functional as F
from mmengine.optim import OptimWrapper
from mmengine.registry import MODELS
from mmpretrain.models import ImageClassifier
from mmpretrain.structures import DataSample
from torch import nn

from ...utils import check_number
from ..dyt_objective import DyTObjectiveMixin
from .head_loss import head_loss


def backward_now(optim_wrapper: OptimWrapper, loss: torch.Tensor) -> None:
    """Back-propagate one part of an iteration's loss at once, freeing its graph.

    The part goes through the wrapper's own ``scale_loss`` (gradient
    accumulation) and ``backward`` (which may scale the loss, as AMP and
    apex do, for its ``step`` to unscale), so its gradients accumulate with
    those of the ``update_params`` call that ends the iteration exactly as
    if both were one loss. ``backward`` counts an iteration (mmengine's
    contract); the count is put back, so that the iteration counts once.

    Raises:
        TypeError: ``optim_wrapper`` is not an mmengine ``OptimWrapper``
            (e.g. ``DeepSpeedOptimWrapper``: no ``scale_loss``, no count).
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
    """``(KL(sg(q) || p) + KL(sg(p) || q)) / 2`` of the softmaxes p, q of two
    logit tensors (B, num_classes), each KL summed over classes and averaged
    over the batch, in float32; ``sg`` stops the gradient, so each term
    trains the tensor whose log-softmax it takes."""
    log_p = F.log_softmax(logits.float(), dim=-1)
    log_q = F.log_softmax(other.float(), dim=-1)
    return 0.5 * (
        F.kl_div(log_p, log_q.detach(), reduction='batchmean', log_target=True) +
        F.kl_div(log_q, log_p.detach(), reduction='batchmean', log_target=True))


@MODELS.register_module()
class DyTImageClassifier(DyTObjectiveMixin, ImageClassifier):
    """ImageClassifier with Dynamic Tuning's training objective.

    Each training step runs the backbone twice with shared weights: the
    *complete* pass (every token through every block part) gives logits z',
    the *dynamic* pass (dispatch masks applied) gives z, and::

        L = CE(z, y) + CE(z', y) + KL(softmax(z') || softmax(z))
            + rate_loss_weight * (mean activation - target_rate)^2
            + consistency_loss_weight * symmetric_kl(z, z2)

    (z' detached in the KL term). z2 are the logits of a second dynamic pass
    (other random draws of a stochastic backbone, e.g. AdaMix's experts),
    which enters only the consistency term (:func:`symmetric_kl`, logged as
    ``loss_consistency``); the two dynamic passes share one graph. The
    complete pass is back-propagated before the dynamic pass runs, so the
    complete and dynamic graphs are never held together.
    Distributed training runs the same step through
    ``TwoPassDistributedDataParallel`` (mmvitdyn.engine), which the tools
    choose for this model; mmengine's own wrapper would call :meth:`loss`
    (both passes in one graph: same gradients, more memory).

    Args:
        complete_loss (bool): Add CE of the complete pass. Defaults to True.
        distill_loss (bool): Add the KL distillation term. Defaults to True.
        rate_loss_weight (float): Weight of the activation-rate loss; 0 turns
            it off. Defaults to 2.
        consistency_loss_weight (float): Weight (>= 0) of the symmetric KL
            between two dynamic passes; 0 turns it off (one dynamic pass).
            Defaults to 0.
        **kwargs: Arguments of mmpretrain's ``ImageClassifier``.
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

    @property
    def needs_complete_pass(self) -> bool:
        return self.dispatching and (self.complete_loss or self.distill_loss)

    def complete_logits(self, inputs: torch.Tensor) -> torch.Tensor:
        """Logits (B, num_classes) with every token through every block part."""
        with self.backbone.complete_mode():
            return self.head(self.extract_feat(inputs))

    def dynamic_losses(self, inputs: torch.Tensor, data_samples: List[DataSample],
                       teacher: Optional[torch.Tensor]) -> Dict[str, torch.Tensor]:
        """Losses of the dynamic pass (and of its consistency with a second
        one), plus activation rates to log."""
        logits = self.head(self.extract_feat(inputs))
        losses = {'loss_cls': head_loss(self.head, logits, data_samples)}
        if self.dispatching:
            if self.distill_loss and teacher is not None:
                losses['loss_distill'] = F.kl_div(
                    F.log_softmax(logits, dim=-1),
                    F.softmax(teacher, dim=-1),
                    reduction='batchmean')
            losses.update(self.rate_terms())
        if self.consistency_loss_weight > 0:
            second = self.head(self.extract_feat(inputs))
            losses['loss_consistency'] = self.consistency_loss_weight * symmetric_kl(logits, second)
        return losses

    def forward(self,
                inputs: torch.Tensor,
                data_samples: Optional[List[DataSample]] = None,
                mode: str = 'tensor',
                teacher: Optional[torch.Tensor] = None):
        """ImageClassifier's modes, plus the two passes of :meth:`two_pass_step`:
        'complete' (logits (B, num_classes) of :meth:`complete_logits`) and
        'dynamic_loss' (the dict of :meth:`dynamic_losses`, given ``teacher``).

        They are modes of ``forward`` so that a distributed wrapper runs them
        through its own forward (where DDP prepares its gradient all-reduce).
        """
        if mode == 'complete':
            return self.complete_logits(inputs)
        if mode == 'dynamic_loss':
            return self.dynamic_losses(inputs, data_samples, teacher)
        return super().forward(inputs, data_samples, mode)

    def loss(self, inputs: torch.Tensor, data_samples: List[DataSample]) -> dict:
        """All DyT losses in one graph (the same gradients as :meth:`train_step`,
        with both passes' graphs held at once)."""
        losses = {}
        teacher = None
        if self.needs_complete_pass:
            complete = self.complete_logits(inputs)
            if self.complete_loss:
                losses['loss_cls_complete'] = head_loss(self.head, complete, data_samples)
            teacher = complete.detach()
        losses.update(self.dynamic_losses(inputs, data_samples, teacher))
        return losses

    def train_step(self, data, optim_wrapper: OptimWrapper) -> Dict[str, torch.Tensor]:
        """One DyT step: complete pass back-propagated first, then the dynamic pass."""
        return self.two_pass_step(data, optim_wrapper, self)

    def two_pass_step(self, data, optim_wrapper: OptimWrapper,
                      caller: nn.Module) -> Dict[str, torch.Tensor]:
        """The training step, with both passes' forwards called through ``caller``.

        The complete pass's loss is back-propagated (its graph freed) before
        the dynamic pass runs; without ``complete_loss`` the complete pass only
        gives the distillation teacher and builds no graph.

        Args:
            data (dict): A batch of the data loader.
            optim_wrapper (OptimWrapper): Its gradient-accumulation counters
                count the step once.
            caller (nn.Module): This model, or a DistributedDataParallel
                wrapper of it: then the complete pass runs under
                ``caller.no_sync()`` and its gradients, accumulated locally,
                are all-reduced with the dynamic pass's in that pass's backward
                (once per iteration).

        Returns:
            dict: Losses and activation rates to log.
        """
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
                        loss_complete = head_loss(self.head, complete, data_samples)
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
