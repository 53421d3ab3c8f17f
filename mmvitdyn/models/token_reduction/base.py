"""What token-reduction methods (ToMe, EViT) share: the per-forward pass object.

Between a block's attention residual and its MLP, the block asks the
:class:`ReductionPass` to run its attention (:meth:`ReductionPass.attend`) and
then to reduce the tokens (:meth:`ReductionPass.reduce`).
"""
from typing import Any, List, Optional, Tuple

import torch
from torch import nn

from ..layers import Attention


class TokenReduction(nn.Module):
    """Base of a config-selectable token reduction (no parameters: nothing trains).

    Subclasses give :meth:`attend` and :meth:`reduce` for block ``index``
    and may check their settings against the backbone in :meth:`check`.
    """

    def check(self, num_layers: int, num_prefix_tokens: int, num_patches: int) -> None:
        """Raise ``ValueError`` when a setting does not fit the backbone
        (``num_patches``: the patch tokens of its configured input size)."""

    def attend(self, index: int, attn: Attention, x: torch.Tensor,
               state: 'ReductionPass') -> Tuple[torch.Tensor, Any]:
        """Attention of block ``index`` on normalised tokens (B, N, C) -> (output (B, N, C),
        what :meth:`reduce` needs)."""
        raise NotImplementedError

    def reduce(self, index: int, x: torch.Tensor, cache: Any,
               state: 'ReductionPass') -> torch.Tensor:
        """Tokens (B, N, C) after the attention residual of block ``index`` -> (B, N', C)."""
        raise NotImplementedError

    def start(self, num_layers: int, num_prefix_tokens: int) -> 'ReductionPass':
        """A fresh pass for one forward through ``num_layers`` blocks."""
        return ReductionPass(self, num_layers, num_prefix_tokens)


class ReductionPass:
    """One forward through the blocks: which block runs, and what flows between them.

    Attributes:
        method (TokenReduction): The reduction.
        num_layers (int): Blocks of the backbone.
        num_prefix_tokens (int): Leading tokens (class token ...) never reduced.
        block (int): Index of the block running now.
        size (Tensor, optional): (B, N, 1) number of input patches merged into
            each token (ToMe); None while every token is one patch.
        token_counts (list[int]): Tokens (extra ones included) after each
            block's reduction: what the block's MLP ran on.
    """

    def __init__(self, method: TokenReduction, num_layers: int, num_prefix_tokens: int):
        self.method = method
        self.num_layers = num_layers
        self.num_prefix_tokens = num_prefix_tokens
        self.block = 0
        self.size: Optional[torch.Tensor] = None
        self.token_counts: List[int] = []
        self._cache: Any = None

    def attend(self, attn: Attention, x: torch.Tensor) -> torch.Tensor:
        """The current block's attention (B, N, C) -> (B, N, C)."""
        out, self._cache = self.method.attend(self.block, attn, x, self)
        return out

    def reduce(self, x: torch.Tensor) -> torch.Tensor:
        """The current block's tokens (B, N, C) -> (B, N', C); moves on to the next block."""
        x = self.method.reduce(self.block, x, self._cache, self)
        self._cache = None
        self.token_counts.append(x.shape[1])
        self.block += 1
        return x

    def average(self, patches: torch.Tensor) -> torch.Tensor:
        """Patch tokens (B, M, C) after the last block -> their mean (B, C), each token
        weighted by its size: ``sum(size * x) / sum(size)``; the plain mean while every
        token is one patch."""
        if self.size is None:
            return patches.mean(dim=1)
        size = self.size[:, self.num_prefix_tokens:]
        return (patches * size).sum(dim=1) / size.sum(dim=1)
