"""Step 5 of Cluster-Learngene: plan a descendant (heads, source layers, FFN runs) and copy a
learngene's tensors into it (priority weight-sharing, the depth rule, FFN sharing)."""
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

import torch
from torch import nn

from ..models.layers import heads_are_shared
from .artefacts.layers import FFN_KEYS, LearngeneLayer
from .artefacts.vit import Learngene
from .file_format import Tensors, require

FFN_SHARING = ('tied', 'independent')
# The paper's named schedules: omega (H_a / H_d) of the three thirds of the depth.
HEAD_SCHEDULES = {'incrementing': (2., 1.5, 1.), 'decrementing': (1., 1.5, 2.)}
# Linear schedules from num_heads=(first, last).
LINEAR_HEAD_SCHEDULES = ('linear-incrementing', 'linear-decrementing')


def heads_per_layer(num_layers: int,
                    ancestry_heads: int,
                    num_heads: Union[int, Sequence[int], None] = None,
                    omega: Union[float, Sequence[float], None] = None,
                    head_schedule: Optional[str] = None) -> List[int]:
    """H_d of each descendant layer; H_a in every layer when none of the three is given.

    Args:
        num_layers, ancestry_heads (int): Descendant depth L and H_a.
        num_heads (int | Sequence[int], optional): Heads of every layer or one per layer; with a
            linear schedule the pair (low, high).
        omega (float | Sequence[float], optional): H_a / H_d, one value or one per layer.
        head_schedule (str, optional): 'incrementing' / 'decrementing' (omega 2, 1.5, 1 over the
            thirds of the depth, or reversed), or 'linear-incrementing' / 'linear-decrementing'.
    """
    if num_heads is not None and omega is not None:
        raise ValueError(f'give num_heads ({num_heads}) or omega ({omega}), not both')
    if head_schedule is not None and head_schedule not in (*HEAD_SCHEDULES, *LINEAR_HEAD_SCHEDULES):
        raise ValueError(f'head_schedule={head_schedule!r} is not one of '
                         f'{[*HEAD_SCHEDULES, *LINEAR_HEAD_SCHEDULES]}')
    if head_schedule in HEAD_SCHEDULES:
        if num_heads is not None or omega is not None:
            raise ValueError(f'head_schedule={head_schedule!r} sets the heads from omega = '
                             f'{HEAD_SCHEDULES[head_schedule]} over the thirds of the depth; '
                             f'drop num_heads={num_heads!r} / omega={omega!r}')
        thirds = HEAD_SCHEDULES[head_schedule]
        omega = [thirds[3 * layer // num_layers] for layer in range(num_layers)]
    if head_schedule in LINEAR_HEAD_SCHEDULES:
        if not (isinstance(num_heads, Sequence) and len(num_heads) == 2):
            raise ValueError(f'head_schedule={head_schedule!r} needs num_heads=(low, high), '
                             f'got num_heads={num_heads!r}')
        low, high = sorted(int(n) for n in num_heads)
        step = (high - low) / max(num_layers - 1, 1)
        heads = [int(low + step * i + 0.5) for i in range(num_layers)]
        if head_schedule == 'linear-decrementing':
            heads = heads[::-1]
    elif omega is not None:
        omegas = [omega] * num_layers if isinstance(omega, (int, float)) else list(omega)
        if len(omegas) != num_layers:
            raise ValueError(f'omega has {len(omegas)} entries for {num_layers} layers')
        heads = [heads_from_omega(ancestry_heads, value) for value in omegas]
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


def heads_from_omega(ancestry_heads: int, omega: float) -> int:
    """H_a / omega, the heads of a descendant layer (or stage); ``ValueError`` unless omega > 0
    and H_a / omega is a whole number."""
    if isinstance(omega, bool) or not isinstance(omega, (int, float)) or not omega > 0:
        raise ValueError(f'omega={omega!r} must be > 0')
    count = ancestry_heads / omega
    if abs(count - round(count)) > 1e-6:
        raise ValueError(f'omega={omega} cannot form heads: H_a / omega = {ancestry_heads} / '
                         f'{omega} = {count:g} is not a whole number')
    return int(round(count))


def head_assignment(num_centroids: int, num_heads: int) -> List[int]:
    """Centroid (priority rank) of each of ``num_heads`` descendant heads."""
    if num_centroids < 1:
        raise ValueError(f'a layer with {num_centroids} centroids cannot initialise heads')
    return [k % num_centroids for k in range(num_heads)]


def layer_sources(ancestry_layers: int, num_layers: int) -> List[int]:
    """Learngene layer of each descendant layer: ``i mod ancestry_layers``."""
    if num_layers < 1:
        raise ValueError(f'num_layers={num_layers} must be >= 1')
    return [i % ancestry_layers for i in range(num_layers)]


@dataclass(frozen=True)
class FFNRun:
    """Consecutive descendant ``layers`` taking their FFN from learngene FFN ``group``."""
    group: int
    layers: Tuple[int, ...]


def ffn_runs(sources: Sequence[int], group_of_layer: Sequence[int]) -> List[FFNRun]:
    """The FFN runs, given the learngene layer of each descendant layer (``sources``) and the
    FFN group of each learngene layer."""
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
        sources (list[int]): Learngene layer of each descendant layer (-1: none, random).
        heads (list[int]): Heads of each descendant layer.
        assignments (list[list[int]]): Centroid of each head, per layer.
        runs (list[FFNRun]): FFN runs, covering the layers in order.
        ffn_sharing (str): 'tied' or 'independent'.
        tie_heads (bool): Heads sharing a centroid are one parameter.
    """
    sources: List[int]
    heads: List[int]
    assignments: List[List[int]]
    runs: List[FFNRun]
    ffn_sharing: str
    tie_heads: bool

    def run_of(self, layer: int) -> Tuple[int, FFNRun, int]:
        """(run index, run, position in the run) of descendant ``layer``."""
        for index, run in enumerate(self.runs):
            if layer in run.layers:
                return index, run, run.layers.index(layer)
        raise KeyError(f'layer {layer} is in no FFN run')

    def is_expanded(self, run: FFNRun) -> bool:
        """Whether ``run``'s layers compute with W_t = g_t(W) (tied, T > 1)."""
        return self.ffn_sharing == 'tied' and len(run.layers) > 1

    def shares_heads(self, layer: int) -> bool:
        """Whether ``layer`` ties heads (``tie_heads`` and a repeated centroid)."""
        assignment = self.assignments[layer]
        return self.tie_heads and len(set(assignment)) < len(assignment)

    def layout(self) -> torch.Tensor:
        """(num_layers, 5) int64: source layer, heads, expanded run (-1 if none), position in it,
        and distinct head parameters; saved with the descendant."""
        rows = []
        for layer, (source, heads) in enumerate(zip(self.sources, self.heads)):
            index, run, position = self.run_of(layer)
            expanded = self.is_expanded(run)
            distinct = len(set(self.assignments[layer])) if self.shares_heads(layer) else heads
            rows.append(
                [source, heads, index if expanded else -1, position if expanded else 0, distinct])
        return torch.tensor(rows, dtype=torch.int64)


def plan_descendant(learngene: Learngene,
                    heads: Sequence[int],
                    ffn_sharing: str = 'tied',
                    tie_heads: bool = False) -> DescendantPlan:
    """The :class:`DescendantPlan` of a descendant with ``heads[l]`` heads in layer l."""
    if ffn_sharing not in FFN_SHARING:
        raise ValueError(f'ffn_sharing={ffn_sharing!r} is not one of {FFN_SHARING}')
    sources = layer_sources(learngene.num_layers, len(heads))
    counts = learngene.num_centroids
    assignments = [head_assignment(counts[s], h) for s, h in zip(sources, heads)]
    group_of_layer = [learngene.group_of(layer) for layer in range(learngene.num_layers)]
    return DescendantPlan(sources, list(heads), assignments, ffn_runs(sources, group_of_layer),
                          ffn_sharing, bool(tie_heads))


def plan_whole_layers(sources: Sequence[Optional[int]], heads: Sequence[int]) -> DescendantPlan:
    """The plan of a descendant inheriting whole layers (Heuristic-, Auto-Learngene, TLEG):
    layer l from learngene layer ``sources[l]`` (None: random), nothing shared."""
    return DescendantPlan([-1 if s is None else s
                           for s in sources], list(heads), [list(range(h)) for h in heads],
                          [FFNRun(-1, (layer, )) for layer in range(len(heads))], 'independent',
                          False)


def check_built_from(model: nn.Module, path: str, built: dict, given: dict) -> None:
    """Raise ``ValueError`` naming both when ``built`` != ``given`` (description -> value of
    ``model``, built from ``path``, and of the learngene given)."""
    if built != given:

        def describe(entries: dict) -> str:
            return ', '.join(f'{key} {value}' for key, value in entries.items())

        raise ValueError(f'this {type(model).__name__} was built from {path} ({describe(built)}); '
                         f'the learngene given has {describe(given)}')


def copy_state(module: nn.Module, state: Tensors, name: str, field: str,
               inherited: Dict[str, int]) -> None:
    """Set every parameter and floating buffer of ``module`` (``name`` in the descendant) from
    ``state``, the learngene's entry ``field`` (see :func:`copy_tensors`); ``ValueError`` names
    a missing or mis-shaped ``field.key``."""
    keys = [key for key, value in module.state_dict().items() if value.is_floating_point()]
    copy_tensors(module, {key: require(state, key, field) for key in keys}, name, inherited)


def copy_tensors(module: nn.Module, state: Tensors, name: str, inherited: Dict[str, int]) -> None:
    """Set every tensor of ``state`` (dotted name in ``module`` -> value) in ``module``
    (``name`` in the descendant), recording its parameters in ``inherited`` (name -> size);
    ``ValueError`` names a mis-shaped one."""
    parameters = dict(module.named_parameters())
    for key, value in state.items():
        owner, _, leaf = key.rpartition('.')
        copy_into(module.get_submodule(owner), leaf, value, f'{name}.{key}')
        if key in parameters:
            inherited[f'{name}.{key}'] = value.numel()


def inherit_ffn(ffn: nn.Module,
                weights: Tensors,
                tied: bool,
                name: str,
                field: str,
                inherited: Dict[str, int],
                names: Optional[Dict[str, str]] = None) -> None:
    """Initialise a descendant block's FFN from its FFN group's W.

    Args:
        ffn (nn.Module): The block's FFN (``name`` in the descendant).
        weights (dict): W, FFN key (``fc1.weight`` ...) -> tensor; the learngene's entry ``field``.
        tied (bool): The block is in a tied run: the run's expansion (``ffn.expansion`` of its
            first FFN) loads W and resets g to the identity; else the FFN's parameters are set.
        inherited (dict): Descendant name -> size, updated.
        names (dict, optional): FFN key -> its name in ``ffn``; default: the key.
    """
    names = names or {}
    if tied:
        if 'expansion' in ffn._modules:
            ffn.expansion.load_ffn(weights)
            ffn.expansion.reset_map()
        inherited.update(
            {f'{name}.{names.get(key, key)}': weights[key].numel()
             for key in FFN_KEYS})
    else:
        copy_state(ffn, {
            names.get(key, key): value
            for key, value in weights.items()
        }, name, field, inherited)


def copy_into(module: nn.Module, name: str, value: torch.Tensor, label: str) -> None:
    """Set parameter ``name`` of ``module`` to ``value``, after a shape check
    naming ``label``."""
    target = getattr(module, name)
    _check_shape(target, value, label)
    with torch.no_grad():
        target.copy_(value)


def inherit_attention(attn: nn.Module, layer: LearngeneLayer, assignment: Sequence[int],
                      name: str) -> Dict[str, int]:
    """Initialise an ``Attention`` with ``len(assignment)`` heads from the centroids of ``layer``
    (head k: centroid ``assignment[k]``; missing q/k/v biases are zero); returns the inherited
    tensors (``qkv.weight``, ...) -> size."""
    index = torch.as_tensor(list(assignment), dtype=torch.long)
    qkv = layer.qkv_weight[index]  # (H_d, 3, D, C)
    proj = layer.proj_weight[index]  # (H_d, C, D)
    tensors = {
        'qkv.weight': qkv.transpose(0, 1).reshape(-1, qkv.shape[-1]),
        'proj.weight': proj.transpose(0, 1).reshape(proj.shape[1], -1)
    }
    shared = heads_are_shared(attn)
    if (attn.shared_heads.qkv_bias if shared else attn.qkv.bias) is not None:
        tensors['qkv.bias'] = qkv.new_zeros(qkv.shape[:3].numel()) if layer.qkv_bias is None \
            else layer.qkv_bias[index].transpose(0, 1).reshape(-1)
    elif layer.qkv_bias is not None:
        raise ValueError(f'{name}: the learngene has q/k/v biases but the descendant was built '
                         'with qkv_bias=False')
    if shared:
        current = attn.shared_heads()
        for key, value in tensors.items():
            _check_shape(current[key], value, f'{name}.{key}')
        attn.shared_heads.load_full(tensors)
    else:
        for key, value in tensors.items():
            owner, _, leaf = key.rpartition('.')
            copy_into(attn.get_submodule(owner), leaf, value, f'{name}.{key}')
    copy_into(attn.proj, 'bias', layer.proj_bias, f'{name}.proj.bias')
    if layer.qkv_bias is None:
        tensors.pop('qkv.bias', None)
    return {'proj.bias': layer.proj_bias.numel(), **{k: v.numel() for k, v in tensors.items()}}


def _check_shape(target: torch.Tensor, value: torch.Tensor, label: str) -> None:
    if tuple(target.shape) != tuple(value.shape):
        raise ValueError(f'cannot inherit {label}: the learngene gives shape '
                         f'{tuple(value.shape)}, the descendant has {tuple(target.shape)}')
