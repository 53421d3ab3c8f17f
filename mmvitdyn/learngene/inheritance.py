"""Step 5 of Cluster-Learngene: how a descendant inherits a learngene.

Heads (priority weight-sharing): descendant layer l has H_d(l) heads of the
ancestry's head width; head k takes centroid ``k mod c`` of its source
layer, centroids in priority order. So when c divides H_d each centroid
is shared H_d / c times in turn; otherwise every centroid is shared
floor(H_d / c) times and the first H_d mod c (the biggest clusters) once
more; when H_d < c only the top H_d centroids are used. A head takes its
centroid's Q, K and V rows with their biases and its columns of W^O; the
W^O bias is the source layer's. H_d(l) is given per layer, as
omega = H_a / H_d, or as an incrementing / decrementing schedule.

Depth: descendant layer i inherits learngene layer ``i`` when the
descendant is at most as deep as the ancestry (the learngene layers in
order, the deepest ones dropped), and ``i mod L_a`` when it is deeper (the
learngene is repeated from its first layer: centroids and FFN groups are
reused in order). Shared copies are independent parameters.

FFNs: consecutive descendant layers whose sources are consecutive layers of
one learngene FFN group form a *run*; a run of T > 1 layers shares the
group's FFN through the learnable expansion (``ffn_expansion``), a run of
one layer gets a plain FFN initialised with the group's FFN.
"""
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple, Union

import torch
from torch import nn

from .artefact import Learngene, LearngeneLayer

HEAD_SCHEDULES = ('incrementing', 'decrementing')


def heads_per_layer(num_layers: int,
                    ancestry_heads: int,
                    num_heads: Union[int, Sequence[int], None] = None,
                    omega: Union[float, Sequence[float], None] = None,
                    head_schedule: Optional[str] = None) -> List[int]:
    """H_d of each descendant layer.

    Args:
        num_layers (int): Descendant depth.
        ancestry_heads (int): H_a.
        num_heads (int | Sequence[int], optional): Heads of every layer, one
            value per layer, or with ``head_schedule`` the pair (first, last).
        omega (float | Sequence[float], optional): H_a / H_d, for every layer
            or per layer; H_a / omega must be a whole number.
        head_schedule (str, optional): 'incrementing' or 'decrementing': the
            heads go linearly (rounded) from ``min(num_heads)`` to
            ``max(num_heads)`` or back over the layers.

    With none of them the descendant keeps H_a heads.
    """
    if num_heads is not None and omega is not None:
        raise ValueError(f'give num_heads ({num_heads}) or omega ({omega}), not both')
    if head_schedule is not None:
        if head_schedule not in HEAD_SCHEDULES:
            raise ValueError(f'head_schedule={head_schedule!r} is not one of {HEAD_SCHEDULES}')
        if not (isinstance(num_heads, Sequence) and len(num_heads) == 2):
            raise ValueError(f'head_schedule={head_schedule!r} needs num_heads=(first, last), '
                             f'got num_heads={num_heads!r}')
        low, high = sorted(int(n) for n in num_heads)
        step = (high - low) / max(num_layers - 1, 1)
        heads = [int(low + step * i + 0.5) for i in range(num_layers)]
        if head_schedule == 'decrementing':
            heads = heads[::-1]
    elif omega is not None:
        omegas = [omega] * num_layers if isinstance(omega, (int, float)) else list(omega)
        if len(omegas) != num_layers:
            raise ValueError(f'omega has {len(omegas)} entries for {num_layers} layers')
        heads = []
        for value in omegas:
            if not value > 0:
                raise ValueError(f'omega={value!r} must be > 0')
            count = ancestry_heads / value
            if abs(count - round(count)) > 1e-6:
                raise ValueError(
                    f'omega={value} cannot form heads: H_a / omega = {ancestry_heads} / '
                    f'{value} = {count:g} is not a whole number')
            heads.append(int(round(count)))
    elif num_heads is None:
        heads = [ancestry_heads] * num_layers
    else:
        heads = [num_heads] * num_layers if isinstance(num_heads, int) else list(num_heads)
        if len(heads) != num_layers:
            raise ValueError(f'num_heads has {len(heads)} entries for {num_layers} layers')
    for index, count in enumerate(heads):
        if not isinstance(count, int) or count < 1:
            raise ValueError(
                f'layer {index} would have {count!r} heads; every layer needs at least one')
    return heads


def head_assignment(num_centroids: int, num_heads: int) -> List[int]:
    """Centroid (priority rank) of each of ``num_heads`` descendant heads."""
    if num_centroids < 1:
        raise ValueError(f'a layer with {num_centroids} centroids cannot initialise heads')
    return [k % num_centroids for k in range(num_heads)]


def layer_sources(ancestry_layers: int, num_layers: int) -> List[int]:
    """Learngene layer of each descendant layer (see the module docstring)."""
    if num_layers < 1:
        raise ValueError(f'num_layers={num_layers} must be >= 1')
    return [i % ancestry_layers for i in range(num_layers)]


@dataclass(frozen=True)
class FFNRun:
    """Consecutive descendant ``layers`` taking their FFN from learngene FFN ``group``."""
    group: int
    layers: Tuple[int, ...]


def ffn_runs(sources: Sequence[int], group_of_layer: Sequence[int]) -> List[FFNRun]:
    """Split the descendant layers into runs (see the module docstring).

    Args:
        sources (Sequence[int]): Learngene layer of each descendant layer.
        group_of_layer (Sequence[int]): FFN group of each learngene layer.
    """
    runs: List[FFNRun] = []
    for layer, source in enumerate(sources):
        group = group_of_layer[source]
        if runs and runs[-1].group == group and sources[layer - 1] + 1 == source:
            runs[-1] = FFNRun(group, runs[-1].layers + (layer, ))
        else:
            runs.append(FFNRun(group, (layer, )))
    return runs


@dataclass
class DescendantPlan:
    """Where every part of a descendant comes from.

    Args:
        sources (list[int]): Learngene layer of each descendant layer.
        heads (list[int]): Heads of each descendant layer.
        assignments (list[list[int]]): Centroid of each head, per layer.
        runs (list[FFNRun]): FFN runs, covering the layers in order.
        expand (bool): Runs of several layers share an expanded FFN.
    """
    sources: List[int]
    heads: List[int]
    assignments: List[List[int]]
    runs: List[FFNRun]
    expand: bool

    def run_of(self, layer: int) -> Tuple[int, FFNRun, int]:
        """(run index, run, position in the run) of descendant ``layer``."""
        for index, run in enumerate(self.runs):
            if layer in run.layers:
                return index, run, run.layers.index(layer)
        raise KeyError(f'layer {layer} is in no FFN run')

    def is_expanded(self, run: FFNRun) -> bool:
        return self.expand and len(run.layers) > 1

    def layout(self) -> torch.Tensor:
        """(num_layers, 4) int64: source layer, heads, expanded run (-1 if
        none) and position in it. Saved with the descendant so a checkpoint
        cannot load into a differently built one."""
        rows = []
        for layer, (source, heads) in enumerate(zip(self.sources, self.heads)):
            index, run, position = self.run_of(layer)
            expanded = self.is_expanded(run)
            rows.append([source, heads, index if expanded else -1, position if expanded else 0])
        return torch.tensor(rows, dtype=torch.int64)


def plan_descendant(learngene: Learngene,
                    heads: Sequence[int],
                    ffn_expansion: bool = True) -> DescendantPlan:
    """The :class:`DescendantPlan` of a descendant with ``heads[l]`` heads in layer l."""
    sources = layer_sources(learngene.num_layers, len(heads))
    counts = learngene.num_centroids
    assignments = [head_assignment(counts[s], h) for s, h in zip(sources, heads)]
    group_of_layer = [learngene.group_of(layer) for layer in range(learngene.num_layers)]
    return DescendantPlan(sources, list(heads), assignments, ffn_runs(sources, group_of_layer),
                          ffn_expansion)


def copy_into(param: torch.Tensor, value: torch.Tensor, name: str) -> None:
    """``param.copy_(value)`` after a shape check that names the parameter."""
    if tuple(param.shape) != tuple(value.shape):
        raise ValueError(f'cannot inherit {name}: the learngene gives shape {tuple(value.shape)}, '
                         f'the descendant has {tuple(param.shape)}')
    with torch.no_grad():
        param.copy_(value)


def inherit_attention(attn: nn.Module, layer: LearngeneLayer, assignment: Sequence[int],
                      name: str) -> None:
    """Initialise an ``Attention`` with ``len(assignment)`` heads from centroids.

    Head k gets Q, K, V rows (and biases) of centroid ``assignment[k]`` and
    its columns of W^O; the W^O bias is the layer's.
    """
    index = torch.as_tensor(list(assignment), dtype=torch.long)
    qkv = layer.qkv_weight[index]  # (H_d, 3, D, C)
    copy_into(attn.qkv.weight, qkv.transpose(0, 1).reshape(-1, qkv.shape[-1]), f'{name}.qkv.weight')
    if attn.qkv.bias is not None:
        if layer.qkv_bias is None:
            with torch.no_grad():
                attn.qkv.bias.zero_()
        else:
            copy_into(attn.qkv.bias, layer.qkv_bias[index].transpose(0, 1).reshape(-1),
                      f'{name}.qkv.bias')
    elif layer.qkv_bias is not None:
        raise ValueError(f'{name}: the learngene has q/k/v biases but the descendant was built '
                         'with qkv_bias=False')
    proj = layer.proj_weight[index]  # (H_d, C, D)
    copy_into(attn.proj.weight,
              proj.transpose(0, 1).reshape(proj.shape[1], -1), f'{name}.proj.weight')
    copy_into(attn.proj.bias, layer.proj_bias, f'{name}.proj.bias')
