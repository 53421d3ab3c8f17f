"""Attention heads tied to one parameter (Cluster-Learngene's shared heads).

A descendant layer may give several heads the same head centroid. By
default the copies are independent parameters; :func:`share_heads` keeps
them one parameter for the whole training: a :class:`SharedHeads` module,
``attn.shared_heads``, stores the Q, K, V rows and biases and the W^O
columns of the U distinct heads once, and the attention's ``qkv.weight``,
``qkv.bias`` and ``proj.weight`` are released and supplied in every forward
pass as the U heads repeated over the H heads (see
:mod:`mmvitdyn.models.layers.supplied_tensors`). Gradients of the copies add
up in the one parameter.
"""
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
    """The U distinct heads of an attention of H heads, and which distinct
    head each of the H heads is.

    Parameters: ``qkv_weight`` (3, U, D, C), ``qkv_bias`` (3, U, D) (None
    without q/k/v biases) and ``proj_weight`` (C, U, D).

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
        """The attention's tensors, every head repeated from its distinct one:
        ``qkv.weight`` (3HD, C), ``qkv.bias`` (3HD, ) and ``proj.weight`` (C, HD)."""
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
        """Set each distinct head from its first copy in full attention
        tensors (the keys of :meth:`forward`; those given are set)."""
        h, d, c = self.num_heads, self.head_dim, self.dim
        views = {'qkv.weight': (3, h, d, c), 'qkv.bias': (3, h, d), 'proj.weight': (c, h, d)}
        for key, value in tensors.items():
            param = getattr(self, SHARED_HEAD_PARAMS[key])
            param.copy_(value.reshape(views[key]).index_select(1, self.first))

    def extra_repr(self) -> str:
        return f'heads={self.index.tolist()}'


def share_heads(attn: Attention, head_index: Sequence[int]) -> None:
    """Tie the heads of an :class:`Attention` that share a ``head_index`` entry.

    Args:
        attn (Attention): ``qkv`` and ``proj`` linears, ``num_heads``, ``head_dim``.
        head_index (Sequence[int]): Distinct head of each head, e.g.
            ``[0, 1, 2, 0]``: heads 0 and 3 become one parameter. The current
            values of each distinct head's first copy are kept.
    """
    if len(head_index) != attn.num_heads:
        raise ValueError(f'head_index has {len(head_index)} entries for {attn.num_heads} heads')
    shared = SharedHeads(head_index, attn.head_dim, attn.qkv.in_features, attn.qkv.bias is not None)
    names = ['qkv.weight', 'proj.weight'] + (['qkv.bias'] if attn.qkv.bias is not None else [])
    shared.to(attn.qkv.weight).load_full({name: attn.get_parameter(name) for name in names})
    release(attn, names)
    attn.shared_heads = shared


def attention_with_shared_heads(head_index: Sequence[int], *args, **kwargs) -> Attention:
    """An :class:`Attention` built from ``(*args, **kwargs)`` whose heads are tied by
    ``head_index`` (:func:`share_heads`): a block's ``attn_layer`` with
    ``functools.partial(attention_with_shared_heads, head_index)``."""
    attn = Attention(*args, **kwargs)
    share_heads(attn, head_index)
    return attn


def supplied_head_name(name: str) -> str:
    """The attention tensor a :class:`SharedHeads` parameter stands for
    (``blocks.1.attn.shared_heads.qkv_weight`` -> ``blocks.1.attn.qkv.weight``);
    other names unchanged."""
    owner, found, attr = name.rpartition('.shared_heads.')
    if not found:
        return name
    key = {param: key for key, param in SHARED_HEAD_PARAMS.items()}.get(attr)
    return f'{owner}.{key}' if key else name


def heads_are_shared(attn: nn.Module) -> bool:
    """Whether :func:`share_heads` tied this attention's heads."""
    return isinstance(getattr(attn, 'shared_heads', None), SharedHeads)


def unshare_heads(attn: nn.Module) -> None:
    """Make every head an independent parameter again, keeping its values (and
    whether it trains)."""
    hold(attn, attn.shared_heads())
    del attn.shared_heads
