"""What every DyT model (classifier, detector, segmentor) adds to its loss."""
from typing import Dict

import torch

DYT_BACKBONE_METHODS = ('complete_mode', 'rate_loss', 'activation_rates')


class DyTObjectiveMixin:
    """Settings of DyT's extra loss terms and the rate terms themselves.

    Put it before the OpenMMLab model class; the model's ``backbone`` must be
    a DyT backbone.

    Args:
        rate_loss_weight (float): Weight of the activation-rate loss; 0 turns
            it off. Defaults to 2.
        complete_loss (bool): Add the task loss of a complete pass (every
            token through every block part).
        distill_loss (bool): Add distillation from the complete pass.
        **kwargs: Arguments of the model class.
    """

    def __init__(self,
                 *args,
                 rate_loss_weight: float = 2.0,
                 complete_loss: bool = False,
                 distill_loss: bool = False,
                 **kwargs):
        super().__init__(*args, **kwargs)
        missing = [name for name in DYT_BACKBONE_METHODS if not hasattr(self.backbone, name)]
        if missing:
            raise TypeError(f'{type(self).__name__} needs a DyT backbone (DyTViT, DyTViTDet); '
                            f'{type(self.backbone).__name__} has no {", ".join(missing)}')
        if rate_loss_weight < 0:
            raise ValueError(f'rate_loss_weight must be >= 0, got {rate_loss_weight}')
        self.rate_loss_weight = rate_loss_weight
        self.complete_loss = complete_loss
        self.distill_loss = distill_loss

    @property
    def dispatching(self) -> bool:
        return getattr(self.backbone, 'dispatch', None) is not None

    def rate_terms(self) -> Dict[str, torch.Tensor]:
        """``loss_rate`` of the last dynamic pass and its activation rates (logged, not summed)."""
        rate_loss = self.backbone.rate_loss()
        terms = {
            'loss_rate': self.rate_loss_weight * rate_loss
        } if self.rate_loss_weight > 0 else {}
        terms.update({
            key: rate_loss.new_tensor(value)
            for key, value in self.backbone.activation_rates().items()
        })
        return terms
