"""Attention heads tied to one parameter (Cluster-Learngene's shared heads;
docs/design_notes.md)."""
from typing import Dict, Sequence

import torch
from torch import nn

from .attention import Attention
from .supplied_tensors import hold, release

# Supplied attention tensor -> the SharedHeads parameter it repeats.
SHARED_HEAD_PARAMS = {
    'qkv.weight': 'qkv_weight',
    'qkv.bias': 'qkv_bias',
    'proj.weight': 'proj_weight'
}


class SharedHeads(nn.Module):
    """The U distinct heads of H: ``qkv_weight`` (3, U, D, C), ``qkv_bias``
    (3, U, D) or None, ``proj_weight`` (C, U, D).

    Args:
        head_index (Sequence[int]): The distinct head (0..U-1, each used) of
            every one of the H heads.
        head_dim (int): D.
        dim (int): C, the token width.
        qkv_bias (bool): Whether the attention has q/k/v biases.
    """

    def __init__(self, head_index: Sequence[int], head_dim: int, dim: int, qkv_bias: bool):
        super().__init__()
        head_index = [int(i) for i in head_index]
        distinct = max(head_index) + 1
        if sorted(set(head_index)) != list(range(distinct)):
            raise ValueError(f'head_index={head_index} must use every distinct head 0..U-1')
        self.num_heads, self.head_dim, self.dim = len(head_index), head_dim, dim
        self.qkv_weight = nn.Parameter(torch.empty(3, distinct, head_dim, dim))
        self.qkv_bias = nn.Parameter(torch.empty(3, distinct, head_dim)) if qkv_bias else None
        self.proj_weight = nn.Parameter(torch.empty(dim, distinct, head_dim))
        self.register_buffer('index', torch.tensor(head_index), persistent=False)
        self.register_buffer(
            'first', torch.tensor([head_index.index(u) for u in range(distinct)]), persistent=False)

    def forward(self) -> Dict[str, torch.Tensor]:
        """``qkv.weight`` (3HD, C), ``qkv.bias`` (3HD,), ``proj.weight`` (C, HD)."""
        h, d, c = self.num_heads, self.head_dim, self.dim
        tensors = {
            'qkv.weight': self.qkv_weight.index_select(1, self.index).reshape(3 * h * d, c),
            'proj.weight': self.proj_weight.index_select(1, self.index).reshape(c, h * d)
        }
        if self.qkv_bias is not None:
            tensors['qkv.bias'] = self.qkv_bias.index_select(1, self.index).reshape(3 * h * d)
        return tensors

    @torch.no_grad()
    def load_full(self, tensors: Dict[str, torch.Tensor]) -> None:
        """Set each distinct head from its first copy in the given full tensors."""
        h, d, c = self.num_heads, self.head_dim, self.dim
        views = {'qkv.weight': (3, h, d, c), 'qkv.bias': (3, h, d), 'proj.weight': (c, h, d)}
        for key, value in tensors.items():
            param = getattr(self, SHARED_HEAD_PARAMS[key])
            param.copy_(value.reshape(views[key]).index_select(1, self.first))

    def extra_repr(self) -> str:
        return f'heads={self.index.tolist()}'


def share_heads(attn: Attention, head_index: Sequence[int]) -> None:
    """Tie the heads of ``attn`` that share a ``head_index`` entry (e.g.
    ``[0, 1, 2, 0]`` ties heads 0 and 3), keeping each first copy's values."""
    if len(head_index) != attn.num_heads:
        raise ValueError(f'head_index has {len(head_index)} entries for {attn.num_heads} heads')
    shared = SharedHeads(head_index, attn.head_dim, attn.qkv.in_features, attn.qkv.bias is not None)
    names = ['qkv.weight', 'proj.weight'] + (['qkv.bias'] if attn.qkv.bias is not None else [])
    shared.to(attn.qkv.weight).load_full({name: attn.get_parameter(name) for name in names})
    release(attn, names)
    attn.shared_heads = shared


def attention_with_shared_heads(head_index: Sequence[int], *args, **kwargs) -> Attention:
    """``Attention(*args, **kwargs)`` with heads tied by ``head_index``."""
    attn = Attention(*args, **kwargs)
    share_heads(attn, head_index)
    return attn


def supplied_head_name(name: str) -> str:
    """``blocks.1.attn.shared_heads.qkv_weight`` -> ``blocks.1.attn.qkv.weight``."""
    owner, found, attr = name.rpartition('.shared_heads.')
    if not found:
        return name
    key = {param: key for key, param in SHARED_HEAD_PARAMS.items()}.get(attr)
    return f'{owner}.{key}' if key else name


def heads_are_shared(attn: nn.Module) -> bool:
    """Whether :func:`share_heads` tied this attention's heads."""
    return isinstance(getattr(attn, 'shared_heads', None), SharedHeads)


def unshare_heads(attn: nn.Module) -> None:
    """Untie the heads, keeping their values and ``requires_grad``."""
    hold(attn, attn.shared_heads())
    del attn.shared_heads
