"""What every DyT model (classifier, detector, segmentor) adds to its loss."""
from typing import Dict

import torch

DYT_BACKBONE_METHODS = ('complete_mode', 'rate_loss', 'activation_rates', 'dispatch_masks')
# What the minimum-activation hinge compares with ``token_minimal``.
TOKEN_MINIMAL_PER = ('layer', 'token')


class DyTObjectiveMixin:
    """Settings of DyT's extra loss terms and the rate terms themselves.

    Put it before the OpenMMLab model class; the model's ``backbone`` must be
    a DyT backbone.

    The minimum-activation hinge is
    ``rate_loss_weight * token_minimal_weight * sum(max(0, token_minimal - rate))``
    over the dispatched layers (block parts), logged as ``loss_rate_min``.
    With ``token_minimal_per='layer'`` ``rate`` is each layer's activation
    rate (mean straight-through mask over images and patch tokens); with
    ``'token'`` it is every single token's mask and the sum runs over images,
    layers and tokens (docs/recipes.md, design notes).

    Args:
        rate_loss_weight (float): Weight of the activation-rate loss; 0 turns
            it off. Defaults to 2.
        complete_loss (bool): Add the task loss of a complete pass (every
            token through every block part).
        distill_loss (bool): Add distillation from the complete pass.
        token_minimal (float): Minimum activation rate in [0, 1] of the hinge.
            Defaults to 0.
        token_minimal_weight (float): Weight of the hinge (>= 0); 0 turns it
            off. Defaults to 0.
        token_minimal_per (str): 'layer' (default) or 'token' (the public
            code as written): what the hinge compares with ``token_minimal``.
        **kwargs: Arguments of the model class.
    """

    def __init__(self,
                 *args,
                 rate_loss_weight: float = 2.0,
                 complete_loss: bool = False,
                 distill_loss: bool = False,
                 token_minimal: float = 0.0,
                 token_minimal_weight: float = 0.0,
                 token_minimal_per: str = 'layer',
                 **kwargs):
        super().__init__(*args, **kwargs)
        missing = [name for name in DYT_BACKBONE_METHODS if not hasattr(self.backbone, name)]
        if missing:
            raise TypeError(f'{type(self).__name__} needs a DyT backbone (DyTViT, DyTViTDet); '
                            f'{type(self.backbone).__name__} has no {", ".join(missing)}')
        self.backbone.attach_objective(type(self).__name__)
        if rate_loss_weight < 0:
            raise ValueError(f'rate_loss_weight must be >= 0, got {rate_loss_weight}')
        if not 0 <= token_minimal <= 1:
            raise ValueError(f'token_minimal={token_minimal} must lie in [0, 1]')
        if token_minimal_weight < 0:
            raise ValueError(f'token_minimal_weight={token_minimal_weight} must be >= 0')
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
        return getattr(self.backbone, 'dispatch', None) is not None

    def min_rate_loss(self) -> torch.Tensor:
        """``sum(max(0, token_minimal - rate))`` of the last forward (see the class docstring)."""
        masks = [m for masks in self.backbone.dispatch_masks() for m in masks.values()]
        if self.token_minimal_per == 'layer':
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
