"""ToMe (Bolya et al., ICLR 2023): token merging by bipartite soft matching (docs/recipes.md)."""
import math
from typing import Callable, List, Sequence, Tuple, Union

import torch
from mmengine.logging import MMLogger
from mmengine.registry import MODELS

from ...utils import check_bool, check_int, check_number
from ..layers import Attention
from .base import ReductionPass, TokenReduction


def bipartite_soft_matching(metric: torch.Tensor, r: int,
                            num_prefix_tokens: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """The merge of ``r`` token pairs chosen on ``metric``.

    Args:
        metric (Tensor): (B, N, D) features to match on (ToMe: mean keys).
        r (int): Tokens to remove, 0 < r <= (N - extra) // 2.
        num_prefix_tokens (int): Leading tokens E that are never merged.

    Returns:
        callable: ``merge(x)``, (B, N, C) -> (B, N - r, C), summing every
        merged A token into its B partner; the extra tokens first, in their
        order, then the unmerged A tokens in their order, then the B tokens.
    """
    protected_a, protected_b = (num_prefix_tokens + 1) // 2, num_prefix_tokens // 2
    with torch.no_grad():
        metric = metric / metric.norm(dim=-1, keepdim=True)
        scores = metric[:, ::2] @ metric[:, 1::2].transpose(1, 2)
        scores[:, :protected_a] = -math.inf  # protected A tokens are never merged away
        scores[:, :, :protected_b] = -math.inf  # nothing merges into protected B tokens
        best, partner = scores.max(dim=-1)
        order = best.argsort(dim=-1, descending=True).unsqueeze(-1)
        kept_a = order[:, r:].sort(dim=1).values
        merged_a = order[:, :r]
        into_b = partner.unsqueeze(-1).gather(1, merged_a)

    def merge(x: torch.Tensor) -> torch.Tensor:
        a, b = x[:, ::2], x[:, 1::2]
        n, t, c = a.shape
        kept = a.gather(1, kept_a.expand(n, t - r, c))
        moved = a.gather(1, merged_a.expand(n, r, c))
        b = b.scatter_reduce(1, into_b.expand(n, r, c), moved, reduce='sum')
        extra = x.new_empty(n, num_prefix_tokens, c)  # back in their order: A, B, A, ...
        extra[:, ::2], extra[:, 1::2] = kept[:, :protected_a], b[:, :protected_b]
        return torch.cat([extra, kept[:, protected_a:], b[:, protected_b:]], dim=1)

    return merge


def per_block_r(r: Union[int, List[int], Tuple[int, float]], num_layers: int) -> List[int]:
    """The tokens each of ``num_layers`` blocks asks to merge, for ToMe's ``r``.

    Args:
        r (int | list[int] | tuple[int, float]): One number for every block, one
            per block, or ``(r, inflect)``: a straight line from ``lo = int(r *
            (1 - inflect))`` to ``2 * r - lo``, block i asking ``int(lo + i * (2 *
            r - 2 * lo) / (num_layers - 1))`` (ToMe's ``parse_r``); ``inflect`` in
            [-1, 1]: -1 decreasing (2r to 0), 0 constant, 1 increasing (0 to 2r).
        num_layers (int): Blocks of the backbone (>= 2 for a tuple).

    Returns:
        list[int]: ``num_layers`` values (before the N // 2 cap of
        :func:`merge_schedule`).
    """
    if isinstance(r, int):
        return [r] * num_layers
    if isinstance(r, list):
        return list(r)
    if num_layers < 2:
        raise ValueError(f'ToMe r={r!r} spreads r over the blocks: it needs >= 2 blocks, '
                         f'the backbone has {num_layers} (allowed there: an int or a list)')
    r, inflect = r
    lo = int(r * (1.0 - inflect))
    step = (2 * r - 2 * lo) / (num_layers - 1)
    return [int(lo + step * i) for i in range(num_layers)]


def merge_schedule(r: Sequence[int], num_patches: int) -> list:
    """Tokens each block merges when block i asks ``r[i]`` and the first block
    sees ``num_patches`` patch tokens: ``min(r_i, N_i // 2)``, N_{i+1} = N_i - merged."""
    merged = []
    for wanted in r:
        merged.append(min(wanted, num_patches // 2))
        num_patches -= merged[-1]
    return merged


@MODELS.register_module()
class ToMe(TokenReduction):
    """Token merging in every block of a :class:`~mmvitdyn.models.DyTViT`.

    Between its attention and its MLP, a block of N tokens (E extra) splits them
    into alternating sets A and B, matches each A token to its most similar B token
    (cosine similarity of the keys, mean over heads) and merges the ``min(r_i, (N -
    E) // 2)`` best-matched A tokens into their partners (size-weighted averages);
    extra tokens are never merged. Token sizes (patches held) are carried on.

    Args:
        r (int | list[int] | tuple[int, float]): Tokens merged per block: one
            number for every block, one per block, or ToMe's ``(r, inflect)``
            (see :func:`per_block_r`). Defaults to 8.
        prop_attn (bool): Proportional attention (``log(size)`` added to the
            logits). Defaults to True.
    """

    def __init__(self, r: Union[int, List[int], Tuple[int, float]] = 8, prop_attn: bool = True):
        super().__init__()
        if isinstance(r, tuple):
            if len(r) != 2:
                raise ValueError(f'ToMe r={r!r} must be a pair (r, inflect) (one value per '
                                 'block is a list)')
            check_int(r[0], 'ToMe r[0]', minimum=0)
            check_number(r[1], 'ToMe r[1]', -1, 1)
        elif isinstance(r, list):
            if not r:
                raise ValueError('ToMe r=[] must be an int >= 0, a non-empty list of them '
                                 'or a pair (r, inflect)')
            for index, value in enumerate(r):
                check_int(value, f'ToMe r[{index}]', minimum=0)
        else:
            check_int(r, 'ToMe r', minimum=0)
        self.r = r
        self.prop_attn = check_bool(prop_attn, 'ToMe prop_attn')

    def check(self, num_layers: int, num_prefix_tokens: int, num_patches: int) -> None:
        """Refuse a per-block ``r`` of another length; log once, with the
        effective schedule, when blocks of the configured input merge fewer
        tokens than ``r`` asks."""
        if isinstance(self.r, list) and len(self.r) != num_layers:
            raise ValueError(f'ToMe r={self.r} gives {len(self.r)} values, the backbone '
                             f'has {num_layers} blocks (allowed: an int, {num_layers} ints '
                             'or a pair (r, inflect))')
        wanted = per_block_r(self.r, num_layers)
        merged = merge_schedule(wanted, num_patches)
        if merged != wanted:
            MMLogger.get_current_instance().warning(
                f'ToMe r={self.r!r} asks more merges than the blocks can make on the '
                f'{num_patches} patch tokens of the configured input (a block of N patch '
                f'tokens merges at most N // 2): the blocks merge {merged}')

    def attend(self, index: int, attn: Attention, x: torch.Tensor,
               state: ReductionPass) -> Tuple[torch.Tensor, torch.Tensor]:
        bias = None
        if self.prop_attn and state.size is not None:
            bias = state.size.log().transpose(1, 2).unsqueeze(1).to(x.dtype)
        out, _, k = attn.forward_with_qk(x, bias)
        return out, k.mean(dim=1)

    def reduce(self, index: int, x: torch.Tensor, metric: torch.Tensor,
               state: ReductionPass) -> torch.Tensor:
        r = min(
            per_block_r(self.r, state.num_layers)[index],
            (x.shape[1] - state.num_prefix_tokens) // 2)
        if r <= 0:
            return x
        merge = bipartite_soft_matching(metric, r, state.num_prefix_tokens)
        size = state.size if state.size is not None else x.new_ones(*x.shape[:2], 1)
        x = merge(x * size)
        state.size = merge(size)
        return x / state.size
