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
    """An :class:`Adapter`, or with ``num_experts > 1`` a :class:`MoEAdapter`
    (``mixing='router'``) or :class:`AdaMixAdapter` (``'adamix'``)."""
    if num_experts > 1:
        extra = dict(share_up=share_up) if mixing == 'adamix' else {}
        return EXPERT_ADAPTERS[mixing](dim, bottleneck, num_experts, scale, dropout, layer_norm,
                                       **extra)
    return Adapter(dim, bottleneck, scale, dropout, layer_norm)


class AdapterBlock(Block):
    """A :class:`Block` whose MLP has an adapter beside it (docs/design_notes.md).

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
        """Initialise the adapter afresh."""
        if self.adapter is not None:
            self.adapter.reset_parameters()

    def forward(self, x: torch.Tensor, reduction=None, **attn_kwargs) -> torch.Tensor:
        """(B, N, C) -> (B, N', C), as :meth:`DyTBlock.forward`."""
        h = self.norm1(x)
        attn_out = self.attn(h, **attn_kwargs) if reduction is None else reduction.attend(
            self.attn, h)
        x = x + self.drop_path(self.ls1(attn_out))
        if reduction is not None:
            x = reduction.reduce(x)
        out = x + self.drop_path(self.ls2(self.mlp(self.norm2(x))))
        return out + self.adapter(x) if self.adapter is not None else out
