"""What a descendant records of its inheritance (``inherited``), and the paper's counts."""
from typing import Dict, Optional, Sequence, Tuple

from ...models.layers import FFN_PARAMS, FFNExpansion

# Deployed name -> (the parameter that holds it, its size).
Holders = Dict[str, Tuple[str, int]]


class InheritanceRecord:
    """A mixin of the descendant backbones: ``inherited`` (deployed name -> size), the deployed
    parameters, the counts. A subclass names in :attr:`HOLDER_PARTS` the parameter-name parts
    that hold other tensors while training, gives them in :meth:`held_tensors`, sets
    ``self.inherited`` when it inherits and registers :meth:`forget_loaded` as a load pre-hook."""
    HOLDER_PARTS: Tuple[str, ...] = ()
    inherited: Dict[str, int]

    def held_tensors(self) -> Holders:
        """Deployed tensors held by the :attr:`HOLDER_PARTS` parameters; none by default."""
        return {}

    def deployed_parameters(self) -> Holders:
        """Deployed name (as after ``materialize``) -> (the parameter that holds it, its size)."""
        deployed = {
            name: (name, param.numel())
            for name, param in self.named_parameters()
            if not any(part in name for part in self.HOLDER_PARTS)
        }
        deployed.update(self.held_tensors())
        return deployed

    def parameter_counts(self) -> Dict[str, int]:
        """The paper's counts: ``t_params`` (deployed), ``i_params`` (set from the learngene) and
        ``trainable`` (free parameters, the maps g included)."""
        return dict(
            t_params=sum(size for _, size in self.deployed_parameters().values()),
            i_params=sum(self.inherited.values()),
            trainable=sum(p.numel() for p in self.parameters() if p.requires_grad))

    def forget_loaded(self, state_dict: dict, prefix: str, *args, **kwargs) -> None:
        """Load-state-dict pre-hook: drop from ``inherited`` the tensors ``state_dict`` loads."""
        holders = self.deployed_parameters()
        self.inherited = {
            name: size
            for name, size in self.inherited.items() if prefix + holders[name][0] not in state_dict
        }


def expanded_ffn_holders(expansion: FFNExpansion,
                         owner: str,
                         ffns: Sequence[str],
                         names: Optional[Dict[str, str]] = None) -> Holders:
    """The deployed FFN tensors of a tied group, held by its ``expansion`` (named ``owner``),
    for the group's FFNs ``ffns`` in order (``names``: FFN key -> its name in an FFN)."""
    names = names or {}
    return {
        f'{ffn}.{names.get(key, key)}': (f'{owner}.{attr}', getattr(expansion, attr).numel())
        for ffn in ffns
        for key, attr in FFN_PARAMS.items()
    }
