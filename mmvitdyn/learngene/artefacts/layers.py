"""The parts of a Cluster-Learngene learngene (ViT, Swin, LeViT): a condensed attention
layer, an FFN group, a stage; their checks and file entries."""
import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Dict, Iterator, List, Optional, Sequence, Tuple

import torch

from ...models.layers import FFN_PARAMS
from ..file_format import (Tensors, expect_int, expect_norm, expect_tensor, expect_type,
                           format_settings, require)
from ..head_clustering import HeadCluster

FFN_KEYS = tuple(FFN_PARAMS)


@dataclass
class LearngeneLayer:
    """The attention part of one ancestry layer, condensed to its centroids.

    Args:
        clusters (list[HeadCluster]): Head clusters in priority order.
        qkv_weight (Tensor): (c, 3, D, C) Q, K, V rows of each centroid.
        qkv_bias (Tensor, optional): (c, 3, D) their biases.
        proj_weight (Tensor): (c, C, D) each centroid's columns of W^O.
        proj_bias (Tensor): (C, ) the bias of W^O.
        norm1, norm2 (dict): State dicts of the layer's norms.
    """
    clusters: List[HeadCluster]
    qkv_weight: torch.Tensor
    qkv_bias: Optional[torch.Tensor]
    proj_weight: torch.Tensor
    proj_bias: torch.Tensor
    norm1: Tensors
    norm2: Tensors

    @property
    def num_centroids(self) -> int:
        return len(self.clusters)

    def num_parameters(self) -> int:
        tensors = [
            self.qkv_weight, self.qkv_bias, self.proj_weight, self.proj_bias, *self.norm1.values(),
            *self.norm2.values()
        ]
        return sum(t.numel() for t in tensors if t is not None)


@dataclass
class FFNGroup:
    """Adjacent ancestry layers sharing one FFN (``weights``: fc1/fc2 weight and bias)."""
    layers: Tuple[int, ...]
    weights: Tensors

    def num_parameters(self) -> int:
        return sum(t.numel() for t in self.weights.values())


def validate_layer(layer, where: str, num_heads: int, embed_dims: int, head_dim: int,
                   qkv_bias: bool) -> None:
    """Check a :class:`LearngeneLayer` of ``num_heads`` heads of ``head_dim`` in ``embed_dims``."""
    c, d = embed_dims, head_dim
    expect_type(layer, LearngeneLayer, where)
    validate_clusters(layer.clusters, where, num_heads)
    n = layer.num_centroids
    expect_tensor(layer.qkv_weight, f'{where}.qkv_weight', (n, 3, d, c))
    if qkv_bias:
        expect_tensor(layer.qkv_bias, f'{where}.qkv_bias', (n, 3, d))
    elif layer.qkv_bias is not None:
        raise ValueError(f'learngene {where}.qkv_bias is given but ancestry.qkv_bias is False')
    expect_tensor(layer.proj_weight, f'{where}.proj_weight', (n, c, d))
    expect_tensor(layer.proj_bias, f'{where}.proj_bias', (c, ))
    expect_norm(layer.norm1, f'{where}.norm1', c)
    expect_norm(layer.norm2, f'{where}.norm2', c)


def ffn_shapes(embed_dims: int, ffn_channels: int) -> Dict[str, Tuple[int, ...]]:
    """Key -> shape of an FFN's tensors (:data:`FFN_KEYS`), C -> F -> C."""
    c, f = embed_dims, ffn_channels
    return {'fc1.weight': (f, c), 'fc1.bias': (f, ), 'fc2.weight': (c, f), 'fc2.bias': (c, )}


def validate_ffn_groups(groups,
                        where: str,
                        num_layers: int,
                        embed_dims: int,
                        ffn_channels: int,
                        shapes_of: Callable[[int, int], dict] = ffn_shapes) -> None:
    """Check FFN groups: a partition of layers 0..num_layers-1 in order, each FFN's tensors of
    ``shapes_of(embed_dims, ffn_channels)`` (key -> shape)."""
    shapes = shapes_of(embed_dims, ffn_channels)
    expect_type(groups, list, where)
    covered = []
    for index, group in enumerate(groups):
        field = f'{where}[{index}]'
        expect_type(group, FFNGroup, field)
        expect_type(group.layers, tuple, f'{field}.layers')
        for layer in group.layers:
            expect_int(layer, f'{field}.layers', minimum=0)
        covered.extend(group.layers)
        expect_type(group.weights, dict, f'{field}.weights')
        for key, shape in shapes.items():
            expect_tensor(
                require(group.weights, key, f'{field}.weights'), f'{field}.weights.{key}', shape)
    if covered != list(range(num_layers)):
        raise ValueError(f'learngene {where} {[list(g.layers) for g in groups]} do not '
                         f'cover layers 0..{num_layers - 1} once, in order')


def layer_to_dict(layer) -> dict:
    """File entry of a condensed layer (a dataclass with ``clusters``): clusters as plain data,
    tensors, dicts of tensors copied."""
    data = _fields_to_dict(layer)
    data['clusters'] = [
        dict(members=list(c.members), mad=c.mad, representative=c.representative)
        for c in layer.clusters
    ]
    return data


def layer_from_dict(data: dict, where: str, layer_class: type = LearngeneLayer):
    """A ``layer_class`` (a dataclass, ``clusters`` first) from :func:`layer_to_dict`'s entry."""
    clusters = [
        HeadCluster(
            _as_tuple(require(c, 'members', f'{where}.clusters[{j}]')),
            require(c, 'mad', f'{where}.clusters[{j}]'),
            require(c, 'representative', f'{where}.clusters[{j}]'))
        for j, c in enumerate(require(data, 'clusters', where, list))
    ]
    tensors = [item.name for item in dataclasses.fields(layer_class) if item.name != 'clusters']
    return layer_class(clusters, **{key: require(data, key, where) for key in tensors})


def ffn_group_to_dict(group: FFNGroup) -> dict:
    return dict(layers=list(group.layers), weights=dict(group.weights))


def ffn_group_from_dict(data: dict, where: str) -> FFNGroup:
    return FFNGroup(_as_tuple(require(data, 'layers', where)), require(data, 'weights', where))


class StagedLearngene:
    """What learngenes in stages (Swin, LeViT) share: ``stages`` of ``STAGE`` dataclasses with
    ``mad``, ``layers`` (``LAYER``) and ``ffn_groups``; ``ancestry`` with per-stage ``depths``
    and ``num_heads``; the subclass gives ``architecture()`` (a line) and ``num_parameters()``."""
    STAGE: ClassVar[type]
    LAYER: ClassVar[type]

    @property
    def num_centroids(self) -> List[List[int]]:
        return [[layer.num_centroids for layer in stage.layers] for stage in self.stages]

    def mad_columns(self) -> List[Tuple[str, torch.Tensor, Sequence[HeadCluster]]]:
        """(label ``stage.block``, MAD of its heads, clusters) of every block, for ``plot_mad``."""
        return [(f'{s}.{b}', stage.mad[b], layer.clusters) for s, stage in enumerate(self.stages)
                for b, layer in enumerate(stage.layers)]

    def summary(self) -> str:
        """Architecture, settings, per stage the centroids per block and the FFN groups of several
        blocks, and the inherited parameters."""
        lines = [self.architecture(), 'settings: ' + format_settings(self.settings)]
        for index, stage in enumerate(self.stages):
            multi = [list(g.layers) for g in stage.ffn_groups if len(g.layers) > 1]
            lines.append(f'stage {index}: centroids per block '
                         f'{[layer.num_centroids for layer in stage.layers]}, FFN groups of '
                         f'several blocks {multi or "none"}')
        lines.append(f'inherited parameters: {self.num_parameters() / 1e6:.3f}M')
        return '\n'.join(lines)

    def validate_stages(self) -> Iterator[Tuple[str, int, Any]]:
        """Check one ``STAGE`` per ancestry stage, each with a finite (depth, heads) MAD and one
        layer per block; yield (field, index, stage) for the family's further checks."""
        depths, heads = self.ancestry['depths'], self.ancestry['num_heads']
        expect_type(self.stages, list, 'stages')
        if len(self.stages) != len(depths):
            raise ValueError(f'learngene has {len(self.stages)} stages, ancestry.depths={depths}')
        for s, stage in enumerate(self.stages):
            where = f'stages[{s}]'
            expect_type(stage, self.STAGE, where)
            expect_tensor(stage.mad, f'{where}.mad', (depths[s], heads[s]))
            expect_type(stage.layers, list, f'{where}.layers')
            if len(stage.layers) != depths[s]:
                raise ValueError(f'learngene {where} has {len(stage.layers)} layers, depth '
                                 f'{depths[s]}')
            yield where, s, stage

    def encode_field(self, name: str, value):
        if name == 'stages':
            return [stage_to_dict(stage) for stage in value]
        return super().encode_field(name, value)

    @classmethod
    def decode_field(cls, name: str, value):
        if name != 'stages':
            return super().decode_field(name, value)
        expect_type(value, list, 'stages')
        return [
            stage_from_dict(stage, f'stages[{s}]', cls.STAGE, cls.LAYER)
            for s, stage in enumerate(value)
        ]


def expect_stage_lists(ancestry: dict, keys: Sequence[str]) -> int:
    """Every ``ancestry[key]`` is a list of one int >= 1 per stage; returns the stage count."""
    stages = len(ancestry['depths']) if isinstance(ancestry['depths'], list) else 0
    for key in keys:
        value = ancestry[key]
        if not isinstance(value, list) or not value or len(value) != stages:
            raise ValueError(f'learngene ancestry.{key}={value!r} must be a list with one int '
                             'per stage')
        for item in value:
            expect_int(item, f'ancestry.{key}', minimum=1)
    return stages


def stage_to_dict(stage) -> dict:
    """File entry of a stage (a dataclass with ``layers``, ``ffn_groups``): layers and groups
    as their entries, other fields as they are (dicts copied)."""
    data = _fields_to_dict(stage)
    data['layers'] = [layer_to_dict(layer) for layer in stage.layers]
    data['ffn_groups'] = [ffn_group_to_dict(group) for group in stage.ffn_groups]
    return data


def stage_from_dict(data: dict, where: str, stage_class: type, layer_class: type):
    """A ``stage_class`` of ``layer_class`` layers from :func:`stage_to_dict`'s entry."""
    layers = [
        layer_from_dict(layer, f'{where}.layers[{i}]', layer_class)
        for i, layer in enumerate(require(data, 'layers', where, list))
    ]
    groups = [
        ffn_group_from_dict(group, f'{where}.ffn_groups[{i}]')
        for i, group in enumerate(require(data, 'ffn_groups', where, list))
    ]
    others = {
        item.name: require(data, item.name, where)
        for item in dataclasses.fields(stage_class) if item.name not in ('layers', 'ffn_groups')
    }
    return stage_class(layers=layers, ffn_groups=groups, **others)


def _fields_to_dict(instance) -> dict:
    """A dataclass's fields by name, dicts copied one level."""
    data = {item.name: getattr(instance, item.name) for item in dataclasses.fields(instance)}
    return {key: dict(value) if isinstance(value, dict) else value for key, value in data.items()}


def _as_tuple(value):
    return tuple(value) if isinstance(value, (list, tuple)) else value


def validate_clusters(clusters, where: str, num_heads: int) -> None:
    """Clusters with disjoint, ascending members in range, a representative among them and a
    finite MAD."""
    expect_type(clusters, list, f'{where}.clusters')
    if not clusters:
        raise ValueError(f'learngene {where}.clusters is empty: the layer has no head centroid')
    seen = set()
    for index, cluster in enumerate(clusters):
        field = f'{where}.clusters[{index}]'
        expect_type(cluster, HeadCluster, field)
        members = cluster.members
        expect_type(members, tuple, f'{field}.members')
        if not members:
            raise ValueError(f'learngene {field}.members is empty')
        for head in members:
            if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < num_heads:
                raise ValueError(f'learngene {field}.members={list(members)} holds {head!r}; heads '
                                 f'are ints in 0..{num_heads - 1}')
        if list(members) != sorted(set(members)):
            raise ValueError(f'learngene {field}.members={list(members)} must be ascending and '
                             'unique')
        if seen & set(members):
            raise ValueError(f'learngene {field}.members={list(members)} repeats heads '
                             f'{sorted(seen & set(members))} of another cluster')
        seen |= set(members)
        representative = cluster.representative
        if isinstance(representative, bool) or not isinstance(representative, int) or \
                representative not in members:
            raise ValueError(f'learngene {field}.representative={representative!r} is not one '
                             f'of its members {list(members)}')
        if isinstance(cluster.mad, bool) or not isinstance(cluster.mad, (int, float)) or \
                not math.isfinite(cluster.mad):
            raise ValueError(f'learngene {field}.mad={cluster.mad!r} must be a finite number')
