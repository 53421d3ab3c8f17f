"""Attention under DynamicViT's keep policy."""
from typing import Optional

import torch

from .attention import Attention
from .dispatch_ops import masked_softmax_attention


class PolicyAttention(Attention):
    """:class:`Attention` under a keep ``policy``: dropped tokens are keys of no
    query but themselves (:func:`masked_softmax_attention` with ``keep_self``),
    and every query keeps its output (the MLP still runs on dropped tokens in
    training)."""

    def forward(self, x: torch.Tensor, policy: Optional[torch.Tensor] = None) -> torch.Tensor:
        """(B, N, C) -> (B, N, C); ``policy`` (B, N) 0/1 (prefix tokens 1) or None
        (plain attention)."""
        if policy is None:
            return super().forward(x)
        return masked_softmax_attention(self, x, policy, keep_self=True)
