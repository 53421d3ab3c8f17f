"""The parts of a Cluster-Learngene learngene (of a ViT or a Swin): one
condensed attention layer, one FFN group; their checks and file entries."""
import dataclasses
import math
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch

from ...models.layers import FFN_PARAMS
from ..file_format import Tensors, expect_int, expect_norm, expect_tensor, expect_type, require
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
    """Check a :class:`LearngeneLayer` of an ancestry layer with ``num_heads``
    heads of ``head_dim`` in ``embed_dims``."""
    c, d = embed_dims, head_dim
    expect_type(layer, LearngeneLayer, where)
    _expect_clusters(layer.clusters, where, num_heads)
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


def validate_ffn_groups(groups, where: str, num_layers: int, embed_dims: int,
                        ffn_channels: int) -> None:
    """Check FFN groups: a partition of layers 0..num_layers-1 in order, each
    with an FFN of ``embed_dims`` -> ``ffn_channels`` -> ``embed_dims``."""
    c, f = embed_dims, ffn_channels
    shapes = {'fc1.weight': (f, c), 'fc1.bias': (f, ), 'fc2.weight': (c, f), 'fc2.bias': (c, )}
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


def layer_to_dict(layer: LearngeneLayer) -> dict:
    """File entry of a :class:`LearngeneLayer` (or subclass): its clusters
    as plain data, its tensors and norms."""
    data = {item.name: getattr(layer, item.name) for item in dataclasses.fields(layer)}
    data['clusters'] = [
        dict(members=list(c.members), mad=c.mad, representative=c.representative)
        for c in layer.clusters
    ]
    data['norm1'], data['norm2'] = dict(layer.norm1), dict(layer.norm2)
    return data


def layer_from_dict(data: dict, where: str, layer_class: type = LearngeneLayer):
    """A ``layer_class`` (:class:`LearngeneLayer` or subclass) from
    :func:`layer_to_dict`'s entry at ``where``."""
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


def _as_tuple(value):
    return tuple(value) if isinstance(value, (list, tuple)) else value


def _expect_clusters(clusters, where: str, num_heads: int) -> None:
    """Clusters with disjoint, ascending members in range, a representative
    among them and a finite MAD."""
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
