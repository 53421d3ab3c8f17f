"""What a descendant records of its inheritance, and the paper's counts.

Every descendant (ViT, Swin, LeViT) keeps in ``inherited`` the deployed
tensors the learngene set (deployed name -> size). A deployed tensor is
held by one of the descendant's parameters: itself, or, while training, a
tied FFN group's W or a tied head (:meth:`InheritanceRecord.deployed_parameters`).
From these come T-Params, I-Params and the trainable count, and the
tensors a checkpoint loads stop counting as inherited.
"""
from typing import Dict, Optional, Sequence, Tuple

from ...models.layers import FFN_PARAMS, FFNExpansion

# Deployed name -> (the parameter that holds it, its size).
Holders = Dict[str, Tuple[str, int]]


class InheritanceRecord:
    """A mixin of the descendant backbones: ``inherited``, the deployed
    parameters and the paper's counts.

    A subclass names in :attr:`HOLDER_PARTS` the parts of the parameter
    names that hold other tensors while training (not deployed as they
    are), and gives in :meth:`held_tensors` the deployed tensors they hold.
    It sets ``self.inherited`` (deployed name -> size) when it inherits and
    registers :meth:`forget_loaded` as a load-state-dict pre-hook (or calls
    it from its own).
    """
    HOLDER_PARTS: Tuple[str, ...] = ()
    inherited: Dict[str, int]

    def held_tensors(self) -> Holders:
        """Deployed tensors held by the :attr:`HOLDER_PARTS` parameters; none by default."""
        return {}

    def deployed_parameters(self) -> Holders:
        """Every tensor of the deployed (materialised) descendant.

        Returns:
            dict[str, tuple[str, int]]: Deployed name (as after
            ``materialize``) -> (the parameter that holds it, its size). A
            tied FFN group's W appears once per block; its map g, which
            exists only while training, not at all.
        """
        deployed = {
            name: (name, param.numel())
            for name, param in self.named_parameters()
            if not any(part in name for part in self.HOLDER_PARTS)
        }
        deployed.update(self.held_tensors())
        return deployed

    def parameter_counts(self) -> Dict[str, int]:
        """The paper's counts, for this backbone.

        Returns:
            dict[str, int]: ``t_params``: parameters of the descendant as
            deployed, every layer's FFN and every head counted (the size
            after ``materialize``); ``i_params``: those of them set from the
            learngene (0 for a descendant loaded from its own checkpoint);
            ``trainable``: the free parameters the optimiser updates (fewer
            than ``t_params`` with tied FFNs or heads; the maps g included).
        """
        return dict(
            t_params=sum(size for _, size in self.deployed_parameters().values()),
            i_params=sum(self.inherited.values()),
            trainable=sum(p.numel() for p in self.parameters() if p.requires_grad))

    def forget_loaded(self, state_dict: dict, prefix: str, *args, **kwargs) -> None:
        """Drop from ``inherited`` the tensors whose holder ``state_dict``
        loads (under ``prefix``): they no longer come from the learngene.
        A load-state-dict pre-hook (further arguments ignored)."""
        holders = self.deployed_parameters()
        self.inherited = {
            name: size
            for name, size in self.inherited.items() if prefix + holders[name][0] not in state_dict
        }


def expanded_ffn_holders(expansion: FFNExpansion,
                         owner: str,
                         ffns: Sequence[str],
                         names: Optional[Dict[str, str]] = None) -> Holders:
    """The deployed FFN tensors of a tied group, held by its expansion.

    Args:
        expansion (FFNExpansion): The group's W and map g.
        owner (str): The expansion's name in the descendant.
        ffns (Sequence[str]): The names of the group's FFNs, in order.
        names (dict, optional): FFN key (``fc1.weight`` ...) -> its name in
            an FFN; default: the key.
    """
    names = names or {}
    return {
        f'{ffn}.{names.get(key, key)}': (f'{owner}.{attr}', getattr(expansion, attr).numel())
        for ffn in ffns
        for key, attr in FFN_PARAMS.items()
    }
