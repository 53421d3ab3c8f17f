"""What every DyT model (classifier, detector, segmentor) adds to its loss."""
from typing import Dict

import torch

from ..utils import check_number
from .backbones import DynamicBackbone

# What the minimum-activation hinge compares with ``token_minimal``: the activation
# rate of each image in each layer, of each layer over the batch, or each token's mask.
TOKEN_MINIMAL_PER = ('image_layer', 'layer', 'token')


class DyTObjectiveMixin:
    """Settings of DyT's extra loss terms and the rate terms (docs/design_notes.md).

    Args:
        rate_loss_weight (float): Rate-loss weight; 0 turns it off. Defaults to 2.
        complete_loss (bool): Add the task loss of a complete pass.
        distill_loss (bool): Add distillation from the complete pass.
        token_minimal (float): Minimum activation rate in [0, 1]. Defaults to 0.
        token_minimal_weight (float): Hinge weight (>= 0). Defaults to 0.
        token_minimal_per (str): Rates the hinge compares: 'image_layer' (per
            image and block part), 'layer' or 'token'. Defaults to 'image_layer'.
        **kwargs: Arguments of the model class.
    """

    def __init__(self,
                 *args,
                 rate_loss_weight: float = 2.0,
                 complete_loss: bool = False,
                 distill_loss: bool = False,
                 token_minimal: float = 0.0,
                 token_minimal_weight: float = 0.0,
                 token_minimal_per: str = 'image_layer',
                 **kwargs):
        super().__init__(*args, **kwargs)
        if not isinstance(self.backbone, DynamicBackbone):
            raise TypeError(f'{type(self).__name__} needs a DyT backbone (DyTViT, DyTViTDet, '
                            f'or another DynamicBackbone); {type(self.backbone).__name__} is not '
                            'one')
        self.backbone.attach_objective(type(self).__name__)
        check_number(rate_loss_weight, 'rate_loss_weight', 0)
        check_number(token_minimal, 'token_minimal', 0, 1)
        check_number(token_minimal_weight, 'token_minimal_weight', 0)
        if token_minimal_per not in TOKEN_MINIMAL_PER:
            raise ValueError(f'token_minimal_per={token_minimal_per!r} is not one of '
                             f'{TOKEN_MINIMAL_PER}')
        self.rate_loss_weight = rate_loss_weight
        self.complete_loss = complete_loss
        self.distill_loss = distill_loss
        self.token_minimal = token_minimal
        self.token_minimal_weight = token_minimal_weight
        self.token_minimal_per = token_minimal_per

    @property
    def dispatching(self) -> bool:
        """Whether the backbone selects tokens (its ``needs_objective()``): then
        the complete pass, the distillation and the rate terms apply."""
        return self.backbone.needs_objective()

    def min_rate_loss(self) -> torch.Tensor:
        """``sum(max(0, token_minimal - rate))`` of the last forward, rates per
        ``token_minimal_per``."""
        # Each dispatched layer's straight-through mask (B, N_patches).
        masks = [m for masks in self.backbone.dispatch_masks() for m in masks.values()]
        if self.token_minimal_per == 'image_layer':
            masks = [m.mean(1) for m in masks]
        elif self.token_minimal_per == 'layer':
            masks = [m.mean() for m in masks]
        return sum((self.token_minimal - m).clamp(min=0).sum() for m in masks)

    def rate_terms(self) -> Dict[str, torch.Tensor]:
        """``loss_rate`` (and ``loss_rate_min``) of the last dynamic pass and its activation
        rates (logged, not summed)."""
        rate_loss = self.backbone.rate_loss()
        terms = {}
        if self.rate_loss_weight > 0:
            terms['loss_rate'] = self.rate_loss_weight * rate_loss
            if self.token_minimal_weight > 0:
                terms['loss_rate_min'] = (
                    self.rate_loss_weight * self.token_minimal_weight * self.min_rate_loss())
        terms.update({
            key: rate_loss.new_tensor(value)
            for key, value in self.backbone.activation_rates().items()
        })
        return terms
