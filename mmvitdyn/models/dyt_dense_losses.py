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
    """Adds DyT's rate loss, rates and optional complete-pass and distillation terms
    to a DyT-backbone detector's or segmentor's losses (docs/design_notes.md).

    Args:
        rate_loss_weight (float): Weight of the rate loss; 0: none. Defaults to 2.
        complete_loss (bool): Add the complete pass's task losses. Defaults to False.
        distill_loss (bool): Add feature distillation. Defaults to False.
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
