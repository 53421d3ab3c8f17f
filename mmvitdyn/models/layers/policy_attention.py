"""Attention under DynamicViT's keep policy."""
from typing import Optional

import torch

from .attention import Attention
from .dispatch_ops import masked_softmax_attention


class PolicyAttention(Attention):
    """:class:`Attention` whose dropped tokens are keys of themselves only."""

    def forward(self, x: torch.Tensor, policy: Optional[torch.Tensor] = None) -> torch.Tensor:
        """(B, N, C) -> (B, N, C); ``policy`` (B, N) 0/1 (prefix tokens 1) or None
        (plain attention)."""
        if policy is None:
            return super().forward(x)
        return masked_softmax_attention(self, x, policy, keep_self=True)
