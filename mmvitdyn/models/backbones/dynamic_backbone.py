"""The protocol of a backbone whose tokens take input-dependent paths."""
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional, Tuple

import torch


class DynamicBackbone:
    """What the DyT models, DynamicViT's classifier, :class:`DispatchRateHook`
    and the analysis tools ask of a backbone whose token selection they train
    or measure; put it before the ``nn.Module`` base.

    The defaults describe a backbone whose every token runs every block (the
    AdaptFormer case): no objective needed, :meth:`complete_mode` a null
    context, no masks, no rates, a rate loss of 0. :class:`DyTViT` and
    :class:`DynamicViT` override what their token selection changes.
    """

    # Who adds the loss terms the token selection needs (a model, or a
    # training loop that says so, see attach_objective); None: nobody yet.
    objective: Optional[str] = None
    # The models that add those terms, named when none did.
    OBJECTIVE_MODELS: Tuple[str, ...] = ()

    def needs_objective(self) -> bool:
        """Whether training needs loss terms beyond the task loss."""
        return False

    def attach_objective(self, owner: str) -> None:
        """Declare that ``owner`` (e.g. ``'DyTImageClassifier'`` or your own
        training loop) adds the loss terms the token selection needs."""
        self.objective = owner

    def check_objective(self) -> None:
        """Raise ``RuntimeError`` when training a backbone that needs an
        objective that nobody attached."""
        if self.training and self.objective is None and self.needs_objective():
            raise RuntimeError(
                f'{type(self).__name__} is training without the loss terms its token '
                'selection needs (no model attached them): build it in '
                f"{' / '.join(self.OBJECTIVE_MODELS)} instead of mmpretrain's, mmseg's, "
                "mmdet's or mmaction2's own model, or, in your own training loop that adds "
                'those terms, call backbone.attach_objective(<your loop>)')

    @contextmanager
    def complete_mode(self) -> Iterator['DynamicBackbone']:
        """Within the context every token runs every block part."""
        yield self

    def set_packed(self, packed: bool) -> None:
        """Choose the packed (tokens gathered) or masked evaluation path."""

    def dispatch_masks(self) -> List[Dict[str, torch.Tensor]]:
        """Per dispatched block, part name -> patch-token mask (B, N_patches) of
        the last forward."""
        return []

    def activation_rates(self) -> Dict[str, float]:
        """``'act_rate'`` and ``'act_rate/<block>.<part>'``: the active share of
        patch tokens in the last forward."""
        return {}

    def rate_loss(self) -> torch.Tensor:
        """The activation-rate loss of the last forward, a scalar."""
        return next(self.parameters()).new_zeros(())
