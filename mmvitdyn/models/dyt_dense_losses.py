"""DyT's training objective for dense models (detectors, segmentors)."""
from contextlib import contextmanager
from typing import Iterator, List

import torch
import torch.nn.functional as F
from torch import nn

from .dyt_objective import DyTObjectiveMixin


@contextmanager
def recorded_outputs(module: nn.Module) -> Iterator[List]:
    """Within the context, each output of ``module`` is appended to the yielded list."""
    outputs: List = []
    handle = module.register_forward_hook(lambda _, args, out: outputs.append(out))
    try:
        yield outputs
    finally:
        handle.remove()


class DyTDenseLossMixin(DyTObjectiveMixin):
    """Adds DyT's terms to the loss dict of an OpenMMLab detector or segmentor.

    Put it before the model class (``class DyTMaskRCNN(DyTDenseLossMixin,
    MaskRCNN)``); the model's ``backbone`` must be a DyT backbone. The task
    losses stay as the model computes them; added are:

    - ``loss_rate``: ``rate_loss_weight * (mean activation - target_rate)^2``
      of the dynamic pass (paper: task losses + 2 * L_rate for dense tasks);
    - the activation rates, overall ``act_rate`` and per block part
      ``act_rate/<block>.<part>``: logged, not summed (no ``loss`` in the key);
    - optional, when ``complete_loss``: the task losses of a complete pass
      (every token through every block part), each key suffixed ``_complete``;
    - optional, when ``distill_loss``: ``loss_distill``, the mean squared
      error between the dynamic pass's backbone maps and those of the
      complete pass (detached).

    Without token dispatch (AdaptFormer, full fine-tuning) nothing is added.

    Args:
        rate_loss_weight (float): Weight of the rate loss; 0 turns it off.
            Defaults to 2.
        complete_loss (bool): Add the complete pass's task losses. Defaults to False.
        distill_loss (bool): Add feature distillation from the complete pass.
            Defaults to False.
        **kwargs: Arguments of the model class.
    """

    def loss(self, inputs: torch.Tensor, data_samples: list) -> dict:
        """The model's task losses plus DyT's terms (see the class docstring)."""
        losses, teacher = {}, None
        if self.dispatching and (self.complete_loss or self.distill_loss):
            with self.backbone.complete_mode(), recorded_outputs(self.backbone) as outputs:
                if self.complete_loss:
                    complete = super().loss(inputs, data_samples)
                    losses.update({f'{key}_complete': value for key, value in complete.items()})
                else:
                    with torch.no_grad():
                        self.backbone(inputs)
            teacher = [feat.detach() for feat in outputs[0]]
        with recorded_outputs(self.backbone) as outputs:
            losses.update(super().loss(inputs, data_samples))
        if not self.dispatching:
            return losses
        if self.distill_loss:
            losses['loss_distill'] = sum(
                F.mse_loss(student, target)
                for student, target in zip(outputs[0], teacher)) / len(teacher)
        losses.update(self.rate_terms())
        return losses
