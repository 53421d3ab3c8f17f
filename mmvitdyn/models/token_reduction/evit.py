"""EViT (Liang et al., ICLR 2022): keep the attentive tokens, fuse the rest (docs/recipes.md)."""
import math
from typing import Optional, Sequence, Tuple

import torch
from mmengine.registry import MODELS

from ...utils import check_bool, check_int, check_number
from ..layers import Attention
from .base import ReductionPass, TokenReduction


@MODELS.register_module()
class EViT(TokenReduction):
    """At the blocks ``locations``, keep the ``ceil(current_rate * N)`` patch tokens the
    class token attends to most (mean over heads); fuse the others into one token.

    Args:
        keep_rate (float): Kept fraction (the target) in (0, 1]. Defaults to 0.7.
        locations (Sequence[int]): Blocks (0-based, increasing) that reduce.
            Defaults to (3, 6, 9).
        fuse (bool): Fuse the other tokens into one, or drop them. Defaults to True.

    Attributes:
        current_rate (float): The fraction kept now: ``keep_rate`` unless
            :class:`~mmvitdyn.engine.EViTKeepRateHook` set it.
    """

    def __init__(self,
                 keep_rate: float = 0.7,
                 locations: Sequence[int] = (3, 6, 9),
                 fuse: bool = True):
        super().__init__()
        check_number(keep_rate, 'EViT keep_rate', 0, 1, low_open=True)
        locations = tuple(locations)
        for index, location in enumerate(locations):
            check_int(location, f'EViT locations[{index}]', minimum=0)
        if not locations or list(locations) != sorted(set(locations)):
            raise ValueError(f'EViT locations={locations} must be increasing block indices')
        self.keep_rate = keep_rate
        self.current_rate = keep_rate
        self.locations = locations
        self.fuse = check_bool(fuse, 'EViT fuse')

    def check(self, num_layers: int, num_prefix_tokens: int, num_patches: int) -> None:
        if not num_prefix_tokens:
            raise ValueError('EViT ranks tokens by the class token\'s attention; the backbone '
                             'has num_prefix_tokens=0 (allowed: >= 1)')
        if any(not 0 <= i < num_layers for i in self.locations):
            raise ValueError(f'EViT locations={self.locations} must lie in '
                             f'0..{num_layers - 1} for {num_layers} blocks')

    def attend(self, index: int, attn: Attention, x: torch.Tensor,
               state: ReductionPass) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        if index not in self.locations:
            return attn(x), None
        out, q, k = attn.forward_with_qk(x)
        logits = attn.scores(q[:, :, :1], k)
        # Softmax in float32, as CUDA autocast computes it (CPU autocast does not):
        # bfloat16 probabilities of N tokens step by about 2^-9 / N and tie the ranking.
        cls_attn = logits.softmax(-1, torch.promote_types(logits.dtype, torch.float32)).mean(1)
        return out, cls_attn[:, 0, state.num_prefix_tokens:].to(x.dtype)

    def reduce(self, index: int, x: torch.Tensor, cls_attn: Optional[torch.Tensor],
               state: ReductionPass) -> torch.Tensor:
        """Tokens (B, E + M, C) -> (B, E + ceil(current_rate * M) [+ 1 fused], C)."""
        extra = state.num_prefix_tokens
        num_patches = x.shape[1] - extra
        keep = math.ceil(self.current_rate * num_patches)
        if cls_attn is None or keep >= num_patches:
            return x
        order = cls_attn.argsort(dim=1, descending=True)
        patches = x[:, extra:]
        c = x.shape[-1]
        kept = patches.gather(1, order[:, :keep, None].expand(-1, -1, c))
        parts = [x[:, :extra], kept]
        if self.fuse:
            rest = order[:, keep:]
            weights = cls_attn.gather(1, rest).unsqueeze(1)
            parts.append(weights @ patches.gather(1, rest[..., None].expand(-1, -1, c)))
        return torch.cat(parts, dim=1)
