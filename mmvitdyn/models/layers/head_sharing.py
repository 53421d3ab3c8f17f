"""Attention heads tied to one parameter (Cluster-Learngene's shared heads).

A descendant layer may give several heads the same head centroid. By
default the copies are independent parameters; :func:`share_heads` keeps
them one parameter for the whole training: the Q, K, V rows and biases and
the W^O columns of the U distinct heads are stored once, and
``attn.qkv.weight`` / ``attn.qkv.bias`` / ``attn.proj.weight`` become views
that repeat them over the H heads (``torch.nn.utils.parametrize``). The
attention's code is unchanged; gradients of the copies add up in the one
parameter. Stored as ``qkv.parametrizations.weight.original`` (3, U, D, C),
``qkv.parametrizations.bias.original`` (3, U, D) and
``proj.parametrizations.weight.original`` (C, U, D).
"""
from typing import Sequence, Tuple

import torch
from torch import nn
from torch.nn.utils import parametrize

from .attention import Attention


class SharedHeads(nn.Module):
    """Parametrisation: a tensor whose head axis repeats U distinct heads.

    Args:
        head_index (Sequence[int]): The distinct head (0..U-1, each used) of
            every one of the H heads.
        view (tuple[int]): The full tensor's shape with the head axis split
            out as axis 1, e.g. (3, H, D, C) for a qkv weight (3HD, C).
        shape (tuple[int]): The full tensor's shape.
    """

    def __init__(self, head_index: Sequence[int], view: Tuple[int, ...], shape: Tuple[int, ...]):
        super().__init__()
        head_index = [int(i) for i in head_index]
        distinct = max(head_index) + 1
        if sorted(set(head_index)) != list(range(distinct)):
            raise ValueError(f'head_index={head_index} must use every distinct head 0..U-1')
        if view[1] != len(head_index):
            raise ValueError(f'head_index has {len(head_index)} heads, the view {view} {view[1]}')
        self.view, self.shape = tuple(view), tuple(shape)
        self.register_buffer('index', torch.tensor(head_index), persistent=False)
        self.register_buffer(
            'first', torch.tensor([head_index.index(u) for u in range(distinct)]), persistent=False)

    def forward(self, distinct: torch.Tensor) -> torch.Tensor:
        """(a, U, ...) -> the full tensor of ``shape``."""
        return distinct.index_select(1, self.index).reshape(self.shape)

    def right_inverse(self, full: torch.Tensor) -> torch.Tensor:
        """Full tensor -> (a, U, ...), each distinct head from its first copy."""
        return full.reshape(self.view).index_select(1, self.first)


def share_heads(attn: nn.Module, head_index: Sequence[int]) -> None:
    """Tie the heads of an ``Attention`` that share a ``head_index`` entry.

    Args:
        attn (nn.Module): An :class:`Attention` (``qkv`` and ``proj``
            linears, ``num_heads``, ``head_dim``).
        head_index (Sequence[int]): Distinct head of each head, e.g.
            ``[0, 1, 2, 0]``: heads 0 and 3 become one parameter. The current
            values of each distinct head's first copy are kept.
    """
    if len(head_index) != attn.num_heads:
        raise ValueError(f'head_index has {len(head_index)} entries for {attn.num_heads} heads')
    h, d, c = attn.num_heads, attn.head_dim, attn.qkv.in_features
    targets = [(attn.qkv, 'weight', (3, h, d, c), (3 * h * d, c)),
               (attn.proj, 'weight', (c, h, d), (c, h * d))]
    if attn.qkv.bias is not None:
        targets.append((attn.qkv, 'bias', (3, h, d), (3 * h * d, )))
    for module, name, view, shape in targets:
        parametrize.register_parametrization(
            module, name, SharedHeads(head_index, view, shape), unsafe=True)


def attention_with_shared_heads(head_index: Sequence[int], *args, **kwargs) -> Attention:
    """An :class:`Attention` built from ``(*args, **kwargs)`` whose heads are tied by
    ``head_index`` (:func:`share_heads`): a block's ``attn_layer`` with
    ``functools.partial(attention_with_shared_heads, head_index)``."""
    attn = Attention(*args, **kwargs)
    share_heads(attn, head_index)
    return attn


def heads_are_shared(attn: nn.Module) -> bool:
    """Whether :func:`share_heads` tied this attention's heads."""
    return parametrize.is_parametrized(attn.proj, 'weight')


@torch.no_grad()
def unshare_heads(attn: nn.Module) -> None:
    """Make every head an independent parameter again, keeping its values."""
    for module in (attn.qkv, attn.proj):
        for name in list(getattr(module, 'parametrizations', {})):
            parametrize.remove_parametrizations(module, name, leave_parametrized=True)
