"""Transformer block with a parallel bottleneck adapter (AdaptFormer)."""
from typing import Optional, Union

import torch
from torch import nn

from .adapter import EXPERT_ADAPTERS, Adapter
from .block import Block


def build_adapter(dim: int,
                  bottleneck: int,
                  scale: Union[float, str] = 0.1,
                  dropout: float = 0.1,
                  num_experts: int = 1,
                  layer_norm: Optional[str] = None,
                  mixing: str = 'router',
                  share_up: bool = True) -> nn.Module:
    """An :class:`Adapter`; when ``num_experts > 1`` a :class:`MoEAdapter`
    (``mixing='router'``) or an :class:`AdaMixAdapter` (``mixing='adamix'``,
    ``share_up``: one up-projection for all experts)."""
    if num_experts > 1:
        extra = dict(share_up=share_up) if mixing == 'adamix' else {}
        return EXPERT_ADAPTERS[mixing](dim, bottleneck, num_experts, scale, dropout, layer_norm,
                                       **extra)
    return Adapter(dim, bottleneck, scale, dropout, layer_norm)


class AdapterBlock(Block):
    """A :class:`Block` whose MLP has an adapter beside it::

        x = x + Attn(LN1(x))
        x = x + MLP(LN2(x)) + Adapter(x)

    The adapter reads the residual the MLP reads.

    Args:
        adapter_cfg (dict, optional): Arguments of :func:`build_adapter`
            except ``dim``; None for no adapter (the plain block).
        **kwargs: Arguments of :class:`Block`.
    """

    def __init__(self, adapter_cfg: Optional[dict] = None, **kwargs):
        super().__init__(**kwargs)
        self.adapter = build_adapter(kwargs['dim'], **adapter_cfg) \
            if adapter_cfg is not None else None

    def reset_tuning_parts(self) -> None:
        """Initialise the parts tuning adds (the adapter, whose zero
        up-projection makes the block start as the plain block) afresh."""
        if self.adapter is not None:
            self.adapter.reset_parameters()

    def forward(self, x: torch.Tensor, **attn_kwargs) -> torch.Tensor:
        """(B, N, C) -> (B, N, C); ``attn_kwargs`` go to the attention."""
        x = x + self.drop_path(self.ls1(self.attn(self.norm1(x), **attn_kwargs)))
        out = x + self.drop_path(self.ls2(self.mlp(self.norm2(x))))
        return out + self.adapter(x) if self.adapter is not None else out
