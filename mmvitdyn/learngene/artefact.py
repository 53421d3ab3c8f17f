"""Step 4 of Cluster-Learngene: the learngene file.

A learngene holds what descendants inherit from the ancestry: per layer the
head centroids in priority order (per head Q/K/V rows and biases, the
head's W^O column slice), the layer's W^O bias and norms; the FFN groups,
each with one FFN; the embeddings (patch embedding, class token, position
embedding) and final norm; plus the ancestry's architecture, the MAD table,
the clusters (members, MAD) and the settings that produced them.

The file layout and its field checks are shared with the baselines'
learngenes (see :mod:`mmvitdyn.learngene.fields`).
"""
import math
from dataclasses import dataclass, field
from typing import Callable, ClassVar, Dict, List, Optional, Sequence, Tuple

import torch
from torch import nn

from ..models.layers import FFN_PARAMS
from .ffn_grouping import Groups
from .fields import (LearngeneFile, Tensors, ancestry_of, check_format, clone_state, expect_int,
                     expect_norm, expect_tensor, expect_type, format_settings, require,
                     validate_ancestry, validate_settings)
from .head_clustering import HeadCluster

FORMAT = 'mmvitdyn.learngene'
VERSION = 1
CENTROIDS = ('select', 'average')
FFN_KEYS = tuple(FFN_PARAMS)
TOP_KEYS = ('ancestry', 'settings', 'mad', 'embeddings', 'final_norm')
LAYER_KEYS = ('qkv_weight', 'qkv_bias', 'proj_weight', 'proj_bias', 'norm1', 'norm2')


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


@dataclass
class Learngene(LearngeneFile):
    """The condensed ancestry; see the module docstring.

    Args:
        ancestry (dict): ``embed_dims``, ``num_layers``, ``num_heads``,
            ``head_dim``, ``feedforward_channels``, ``patch_size``,
            ``patch_resolution`` (the grid its position embedding is for),
            ``num_extra_tokens``, ``qkv_bias``.
        settings (dict): How it was made (clustering method, eps,
            min_samples, k, centroid, FFN rule, number of images ...).
        mad (Tensor): (num_layers, num_heads) MAD table in pixels.
        embeddings (dict): The ancestry's stem (``ViT.is_stem_param``):
            ``patch_embed.proj.weight``/``bias``, ``cls_token``,
            ``pos_embed`` and, of a distilled ancestry, ``dist_token``.
        final_norm (dict): State dict of the final norm (empty if none).
        layers (list[LearngeneLayer]): One per ancestry layer.
        ffn_groups (list[FFNGroup]): A partition of the layers, in order.
    """
    FILE_FORMAT: ClassVar[str] = FORMAT
    FILE_VERSION: ClassVar[int] = VERSION
    WRITER: ClassVar[str] = 'build_learngene.py'

    ancestry: dict
    settings: dict
    mad: torch.Tensor
    embeddings: Tensors
    final_norm: Tensors
    layers: List[LearngeneLayer]
    ffn_groups: List[FFNGroup] = field(default_factory=list)

    # ----------------------------------------------------------- extraction
    @classmethod
    @torch.no_grad()
    def extract(cls,
                backbone: nn.Module,
                mad: torch.Tensor,
                clusters: Sequence[Sequence[HeadCluster]],
                ffn_groups: Groups,
                centroid: str = 'select',
                settings: Optional[dict] = None) -> 'Learngene':
        """Condense a ViT backbone given its clusters and FFN groups.

        Args:
            backbone (nn.Module): mmvitdyn ``ViT`` (or subclass) ancestry.
            mad (Tensor): (num_layers, num_heads) MAD table.
            clusters: Per layer, head clusters in priority order.
            ffn_groups: Partition of the layers (see ``group_ffns``).
            centroid (str): 'select' takes each cluster's representative head
                and each group's first FFN; 'average' averages the members'
                parameters (Q/K/V rows and biases, W^O slices; FFN weights).
            settings (dict, optional): Recorded as is.
        """
        if centroid not in CENTROIDS:
            raise ValueError(f'centroid={centroid!r} is not one of {CENTROIDS}')
        blocks = list(backbone.blocks)
        if len(clusters) != len(blocks):
            raise ValueError(
                f'clusters are given for {len(clusters)} layers, the ancestry has {len(blocks)}')
        ancestry = ancestry_of(backbone)
        layers = [
            condense_layer(block.attn, block.norm1, block.norm2, layer_clusters, centroid)
            for block, layer_clusters in zip(blocks, clusters)
        ]
        groups = condense_ffns(ffn_groups, lambda i: blocks[i].mlp.state_dict(), centroid)
        embeddings = {
            key: value.detach().clone()
            for key, value in backbone.state_dict().items() if backbone.is_stem_param(key)
        }
        final_norm = clone_state(backbone.norm.state_dict())
        settings = dict(settings or {}, centroid=centroid)
        learngene = cls(ancestry, settings,
                        mad.detach().cpu().float().clone(), embeddings, final_norm, layers, groups)
        learngene.validate()
        return learngene

    # ------------------------------------------------------------- queries
    @property
    def num_layers(self) -> int:
        return len(self.layers)

    @property
    def num_centroids(self) -> List[int]:
        return [layer.num_centroids for layer in self.layers]

    def group_of(self, layer: int) -> int:
        """Index of the FFN group holding ancestry ``layer``."""
        for index, group in enumerate(self.ffn_groups):
            if layer in group.layers:
                return index
        raise KeyError(f'layer {layer} is in no FFN group')

    def parameter_counts(self) -> Dict[str, int]:
        """Parameters the learngene holds: heads (+ W^O bias and norms), FFNs,
        embeddings (+ final norm), and their total."""
        counts = dict(
            attention=sum(layer.num_parameters() for layer in self.layers),
            ffn=sum(group.num_parameters() for group in self.ffn_groups),
            embeddings=sum(t.numel()
                           for t in [*self.embeddings.values(), *self.final_norm.values()]))
        counts['total'] = sum(counts.values())
        return counts

    def summary(self) -> str:
        """A readable table: centroids per layer, clusters, FFN groups, parameters."""
        a, s = self.ancestry, self.settings
        lines = [
            f"Learngene of a ViT: {a['num_layers']} layers, {a['num_heads']} heads of "
            f"{a['head_dim']}, {a['embed_dims']} wide, FFN {a['feedforward_channels']}, patch "
            f"{a['patch_size']}",
            'settings: ' + format_settings(s),
            f"{'layer':>5} | {'heads':>5} | {'FFN':>3} | "
            'clusters in priority order: members (mean MAD px)',
        ]
        for index, layer in enumerate(self.layers):
            clusters = '  '.join('[' + ','.join(map(str, c.members)) + f'] {c.mad:.1f}'
                                 for c in layer.clusters)
            lines.append(
                f'{index:>5} | {layer.num_centroids:>5} | {self.group_of(index):>3} | {clusters}')
        multi = [g.layers for g in self.ffn_groups if len(g.layers) > 1]
        lines.append(f'centroids per layer: {self.num_centroids} (total {sum(self.num_centroids)} '
                     f"of {a['num_layers'] * a['num_heads']} heads)")
        ffns = len(self.ffn_groups)
        lines.append(f'FFN groups of several layers: {[list(g) for g in multi] or "none"} '
                     f'({ffns} FFN{"s" if ffns > 1 else ""} for {self.num_layers} layers)')
        counts = self.parameter_counts()
        lines.append(f"inherited parameters: {counts['total'] / 1e6:.3f}M (attention "
                     f"{counts['attention'] / 1e6:.3f}M, FFN {counts['ffn'] / 1e6:.3f}M, "
                     f"embeddings and final norm {counts['embeddings'] / 1e6:.3f}M)")
        return '\n'.join(lines)

    # ----------------------------------------------------------- validation
    def validate(self) -> None:
        """Check everything inheritance reads; raise ``ValueError`` naming the
        first field that is missing, of the wrong type or shape, out of range
        or not finite."""
        validate_settings(self.settings)
        a = validate_ancestry(self.ancestry)
        c, h = a['embed_dims'], a['num_heads']
        expect_tensor(self.mad, 'mad', (a['num_layers'], h))
        expect_type(self.embeddings, dict, 'embeddings')
        p, grid, extra = a['patch_size'], a['patch_resolution'], a['num_extra_tokens']
        embeddings = {
            'patch_embed.proj.weight': (c, None, p, p),
            'patch_embed.proj.bias': (c, ),
            'pos_embed': (1, extra + grid[0] * grid[1], c)
        }
        if extra:
            embeddings['cls_token'] = (1, 1, c)
        for key, shape in embeddings.items():
            expect_tensor(require(self.embeddings, key, 'embeddings'), f'embeddings.{key}', shape)
        expect_norm(self.final_norm, 'final_norm', c, optional=True)
        expect_type(self.layers, list, 'layers')
        if len(self.layers) != a['num_layers']:
            raise ValueError(f'learngene has {len(self.layers)} layers, ancestry.num_layers='
                             f"{a['num_layers']}")
        for index, layer in enumerate(self.layers):
            validate_layer(layer, f'layers[{index}]', a['num_heads'], c, a['head_dim'],
                           a['qkv_bias'])
        validate_ffn_groups(self.ffn_groups, 'ffn_groups', a['num_layers'], c,
                            a['feedforward_channels'])

    # ----------------------------------------------------------------- I/O
    def to_dict(self) -> dict:
        return dict(
            format=FORMAT,
            version=VERSION,
            ancestry=dict(self.ancestry),
            settings=dict(self.settings),
            mad=self.mad,
            embeddings=dict(self.embeddings),
            final_norm=dict(self.final_norm),
            layers=[layer_to_dict(layer) for layer in self.layers],
            ffn_groups=[ffn_group_to_dict(g) for g in self.ffn_groups])

    @classmethod
    def from_dict(cls, data: dict, source: str = 'learngene data') -> 'Learngene':
        """Read :meth:`to_dict`'s layout; ``ValueError`` names ``source`` and
        the missing or inconsistent field."""
        check_format(data, FORMAT, VERSION, source)
        try:
            layers = [
                layer_from_dict(layer, f'layers[{index}]')
                for index, layer in enumerate(require(data, 'layers', '', list))
            ]
            groups = [
                ffn_group_from_dict(g, f'ffn_groups[{i}]')
                for i, g in enumerate(require(data, 'ffn_groups', '', list))
            ]
            learngene = cls(*(require(data, key, '') for key in TOP_KEYS), layers, groups)
            learngene.validate()
        except ValueError as err:
            raise ValueError(f'{source}: {err}') from err
        return learngene


# ----------------------------------------------- layers and FFN groups
def pick_heads(tensor: torch.Tensor, clusters: Sequence[HeadCluster],
               centroid: str) -> torch.Tensor:
    """(H, ...) per-head tensor -> (c, ...), one row per cluster: its
    representative's (``select``) or its members' mean (``average``)."""
    if centroid == 'select':
        return torch.stack([tensor[c.representative] for c in clusters])
    return torch.stack([tensor[list(c.members)].mean(0) for c in clusters])


@torch.no_grad()
def condense_layer(attn: nn.Module, norm1: nn.Module, norm2: nn.Module,
                   clusters: Sequence[HeadCluster], centroid: str) -> LearngeneLayer:
    """The :class:`LearngeneLayer` of an attention with ``qkv`` (C -> 3HD) and
    ``proj`` (HD -> C) linears and ``num_heads``, and the layer's norms."""
    h = attn.num_heads
    d = attn.qkv.out_features // (3 * h)
    qkv = attn.qkv.weight.view(3, h, d, -1).transpose(0, 1)  # (H, 3, D, C)
    bias = attn.qkv.bias.view(3, h, d).transpose(0, 1) if attn.qkv.bias is not None else None
    proj = attn.proj.weight.view(-1, h, d).transpose(0, 1)  # (H, C, D)
    return LearngeneLayer(
        clusters=list(clusters),
        qkv_weight=pick_heads(qkv, clusters, centroid),
        qkv_bias=None if bias is None else pick_heads(bias, clusters, centroid),
        proj_weight=pick_heads(proj, clusters, centroid),
        proj_bias=attn.proj.bias.detach().clone(),
        norm1=clone_state(norm1.state_dict()),
        norm2=clone_state(norm2.state_dict()))


@torch.no_grad()
def condense_ffns(ffn_groups: Groups, ffn_of: Callable[[int], Tensors],
                  centroid: str) -> List[FFNGroup]:
    """One FFN per group (``fc1.weight`` ... from ``ffn_of(layer)``): the
    first layer's (``select``) or the members' mean (``average``)."""
    groups = []
    for group in ffn_groups:
        members = group if centroid == 'average' else group[:1]
        states = [ffn_of(i) for i in members]
        weights = {key: torch.stack([s[key] for s in states]).mean(0) for key in FFN_KEYS}
        groups.append(FFNGroup(tuple(group), weights))
    return groups


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
    data = dict(clusters=[
        dict(members=list(c.members), mad=c.mad, representative=c.representative)
        for c in layer.clusters
    ])
    data.update({key: getattr(layer, key) for key in LAYER_KEYS})
    for key in ('norm1', 'norm2'):
        data[key] = dict(data[key])
    return data


def layer_from_dict(data: dict, where: str, layer_class=LearngeneLayer, keys=LAYER_KEYS):
    """A ``layer_class`` from :func:`layer_to_dict`'s layout (``keys``: its tensors)."""
    clusters = [
        HeadCluster(
            _as_tuple(require(c, 'members', f'{where}.clusters[{j}]')),
            require(c, 'mad', f'{where}.clusters[{j}]'),
            require(c, 'representative', f'{where}.clusters[{j}]'))
        for j, c in enumerate(require(data, 'clusters', where, list))
    ]
    return layer_class(clusters, **{key: require(data, key, where) for key in keys})


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
