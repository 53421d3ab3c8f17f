"""Step 4 of Cluster-Learngene: the learngene file.

A learngene holds what descendants inherit from the ancestry: per layer the
head centroids in priority order (per head Q/K/V rows and biases, the
head's W^O column slice), the layer's W^O bias and norms; the FFN groups,
each with one FFN; the embeddings (patch embedding, class token, position
embedding) and final norm; plus the ancestry's architecture, the MAD table,
the clusters (members, MAD) and the settings that produced them.

The file is a plain ``torch.save`` of dicts, lists, numbers, strings and
tensors (loadable with ``weights_only=True``), written to a temporary file
and renamed into place.
"""
import os.path as osp
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import torch
from torch import nn

from ..utils import save_atomically
from .ffn_grouping import Groups
from .head_clustering import HeadCluster

FORMAT = 'mmvitdyn.learngene'
VERSION = 1
CENTROIDS = ('select', 'average')
FFN_KEYS = ('fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias')
ANCESTRY_KEYS = ('embed_dims', 'num_layers', 'num_heads', 'head_dim', 'feedforward_channels',
                 'patch_size', 'patch_resolution', 'num_extra_tokens', 'qkv_bias')
Tensors = Dict[str, torch.Tensor]


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
class Learngene:
    """The condensed ancestry; see the module docstring.

    Args:
        ancestry (dict): ``embed_dims``, ``num_layers``, ``num_heads``,
            ``head_dim``, ``feedforward_channels``, ``patch_size``,
            ``patch_resolution`` (the grid its position embedding is for),
            ``num_extra_tokens``, ``qkv_bias``.
        settings (dict): How it was made (clustering method, eps,
            min_samples, k, centroid, FFN rule, number of images ...).
        mad (Tensor): (num_layers, num_heads) MAD table in pixels.
        embeddings (dict): ``patch_embed.proj.weight``/``bias``,
            ``cls_token``, ``pos_embed``.
        final_norm (dict): State dict of the final norm (empty if none).
        layers (list[LearngeneLayer]): One per ancestry layer.
        ffn_groups (list[FFNGroup]): A partition of the layers, in order.
    """
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
        attn0 = blocks[0].attn
        ancestry = dict(embed_dims=backbone.embed_dims,
                        num_layers=len(blocks),
                        num_heads=attn0.num_heads,
                        head_dim=attn0.head_dim,
                        feedforward_channels=blocks[0].mlp.fc1.out_features,
                        patch_size=backbone.patch_size,
                        patch_resolution=list(backbone.patch_resolution),
                        num_extra_tokens=backbone.num_extra_tokens,
                        qkv_bias=attn0.qkv.bias is not None)
        layers = [
            cls._condense_attention(block, layer_clusters, centroid)
            for block, layer_clusters in zip(blocks, clusters)
        ]
        groups = []
        for group in ffn_groups:
            members = group if centroid == 'average' else group[:1]
            weights = {
                key: torch.stack([_ffn_state(blocks[i])[key] for i in members]).mean(0)
                for key in FFN_KEYS
            }
            groups.append(FFNGroup(tuple(group), weights))
        embeddings = {
            key: value.detach().clone()
            for key, value in backbone.state_dict().items()
            if key in ('cls_token', 'pos_embed') or key.startswith('patch_embed.')
        }
        final_norm = _clone(backbone.norm.state_dict())
        settings = dict(settings or {}, centroid=centroid)
        learngene = cls(ancestry, settings,
                        mad.detach().cpu().float().clone(), embeddings, final_norm, layers, groups)
        learngene.validate()
        return learngene

    @staticmethod
    def _condense_attention(block: nn.Module, clusters: Sequence[HeadCluster],
                            centroid: str) -> LearngeneLayer:
        attn = block.attn
        h, d = attn.num_heads, attn.head_dim
        qkv = attn.qkv.weight.view(3, h, d, -1).transpose(0, 1)  # (H, 3, D, C)
        bias = attn.qkv.bias.view(3, h, d).transpose(0, 1) if attn.qkv.bias is not None else None
        proj = attn.proj.weight.view(-1, h, d).transpose(0, 1)  # (H, C, D)

        def pick(tensor):
            if centroid == 'select':
                return torch.stack([tensor[c.representative] for c in clusters])
            return torch.stack([tensor[list(c.members)].mean(0) for c in clusters])

        return LearngeneLayer(clusters=list(clusters),
                              qkv_weight=pick(qkv),
                              qkv_bias=pick(bias) if bias is not None else None,
                              proj_weight=pick(proj),
                              proj_bias=attn.proj.bias.detach().clone(),
                              norm1=_clone(block.norm1.state_dict()),
                              norm2=_clone(block.norm2.state_dict()))

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
        counts = dict(attention=sum(layer.num_parameters() for layer in self.layers),
                      ffn=sum(group.num_parameters() for group in self.ffn_groups),
                      embeddings=sum(
                          t.numel()
                          for t in [*self.embeddings.values(), *self.final_norm.values()]))
        counts['total'] = sum(counts.values())
        return counts

    def summary(self) -> str:
        """A readable table: centroids per layer, clusters, FFN groups, parameters."""
        a, s = self.ancestry, self.settings
        lines = [
            f"Learngene of a ViT: {a['num_layers']} layers, {a['num_heads']} heads of {a['head_dim']}, "
            f"{a['embed_dims']} wide, FFN {a['feedforward_channels']}, patch {a['patch_size']}",
            'settings: ' + ', '.join(f'{k}={v}' for k, v in s.items()),
            f"{'layer':>5} | {'heads':>5} | {'FFN':>3} | clusters in priority order: members (mean MAD px)",
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
        """Raise ``ValueError`` naming the first inconsistent field."""
        a = self.ancestry
        missing = [k for k in ANCESTRY_KEYS if k not in a]
        if missing:
            raise ValueError(f'learngene ancestry lacks {missing}')
        c, h, d = a['embed_dims'], a['num_heads'], a['head_dim']
        if len(self.layers) != a['num_layers']:
            raise ValueError(
                f"learngene has {len(self.layers)} layers, ancestry.num_layers={a['num_layers']}")
        if tuple(self.mad.shape) != (a['num_layers'], h):
            raise ValueError(f'learngene mad has shape {tuple(self.mad.shape)}, expected '
                             f"({a['num_layers']}, {h})")
        for index, layer in enumerate(self.layers):
            n = layer.num_centroids
            if n < 1:
                raise ValueError(f'learngene layer {index} has no head centroid')
            expected = dict(qkv_weight=(n, 3, d, c),
                            qkv_bias=(n, 3, d) if a['qkv_bias'] else None,
                            proj_weight=(n, c, d),
                            proj_bias=(c, ))
            for name, shape in expected.items():
                tensor = getattr(layer, name)
                got = None if tensor is None else tuple(tensor.shape)
                if got != shape:
                    raise ValueError(
                        f'learngene layer {index} {name} has shape {got}, expected {shape}')
        covered = [layer for group in self.ffn_groups for layer in group.layers]
        if covered != list(range(a['num_layers'])):
            raise ValueError(
                f'learngene ffn_groups {[list(g.layers) for g in self.ffn_groups]} do not '
                f"cover layers 0..{a['num_layers'] - 1} once, in order")
        f = a['feedforward_channels']
        shapes = {'fc1.weight': (f, c), 'fc1.bias': (f, ), 'fc2.weight': (c, f), 'fc2.bias': (c, )}
        for group in self.ffn_groups:
            for key, shape in shapes.items():
                got = tuple(group.weights[key].shape) if key in group.weights else None
                if got != shape:
                    raise ValueError(
                        f'learngene FFN group {list(group.layers)} {key} has shape {got}, '
                        f'expected {shape}')

    # ----------------------------------------------------------------- I/O
    def to_dict(self) -> dict:
        return dict(format=FORMAT,
                    version=VERSION,
                    ancestry=dict(self.ancestry),
                    settings=dict(self.settings),
                    mad=self.mad,
                    embeddings=dict(self.embeddings),
                    final_norm=dict(self.final_norm),
                    layers=[
                        dict(clusters=[
                            dict(members=list(c.members),
                                 mad=c.mad,
                                 representative=c.representative) for c in layer.clusters
                        ],
                             qkv_weight=layer.qkv_weight,
                             qkv_bias=layer.qkv_bias,
                             proj_weight=layer.proj_weight,
                             proj_bias=layer.proj_bias,
                             norm1=dict(layer.norm1),
                             norm2=dict(layer.norm2)) for layer in self.layers
                    ],
                    ffn_groups=[
                        dict(layers=list(g.layers), weights=dict(g.weights))
                        for g in self.ffn_groups
                    ])

    @classmethod
    def from_dict(cls, data: dict, source: str = 'learngene') -> 'Learngene':
        if not isinstance(data, dict) or data.get('format') != FORMAT:
            raise ValueError(f'{source} is not a learngene (no format={FORMAT!r} entry)')
        if data.get('version') != VERSION:
            raise ValueError(f"{source} has learngene version {data.get('version')!r}; this "
                             f'mmvitdyn reads version {VERSION}')
        try:
            layers = [
                LearngeneLayer(clusters=[
                    HeadCluster(tuple(c['members']), float(c['mad']), int(c['representative']))
                    for c in layer['clusters']
                ],
                               qkv_weight=layer['qkv_weight'],
                               qkv_bias=layer['qkv_bias'],
                               proj_weight=layer['proj_weight'],
                               proj_bias=layer['proj_bias'],
                               norm1=layer['norm1'],
                               norm2=layer['norm2']) for layer in data['layers']
            ]
            groups = [FFNGroup(tuple(g['layers']), g['weights']) for g in data['ffn_groups']]
            learngene = cls(data['ancestry'], data['settings'], data['mad'], data['embeddings'],
                            data['final_norm'], layers, groups)
        except (KeyError, TypeError) as err:
            raise ValueError(f'{source} is incomplete: missing or malformed entry {err}') from err
        try:
            learngene.validate()
        except ValueError as err:
            raise ValueError(f'{source}: {err}') from err
        return learngene

    def save(self, path: str) -> None:
        """Write the learngene atomically (temporary file, then rename)."""
        self.validate()
        save_atomically(self.to_dict(), path)

    @classmethod
    def load(cls, path: str, mmap: bool = False) -> 'Learngene':
        """Read and check a learngene file.

        Args:
            path (str): The file.
            mmap (bool): Map tensors lazily from the file (cheap when only
                the structure is needed). Defaults to False.

        Raises:
            FileNotFoundError: No such file.
            ValueError: The file is corrupted, not a learngene, or inconsistent.
        """
        if not osp.isfile(path):
            raise FileNotFoundError(f'learngene file {path!r} does not exist (build one with '
                                    'tools/learngene/build_learngene.py)')
        try:
            data = torch.load(path, map_location='cpu', weights_only=True, mmap=mmap)
        except Exception as err:  # torch raises several types for damaged files
            raise ValueError(f'learngene file {path!r} is corrupted or not a torch file: '
                             f'{type(err).__name__}: {err}') from err
        return cls.from_dict(data, f'learngene file {path!r}')


def _clone(state: Tensors) -> Tensors:
    return {key: value.detach().clone() for key, value in state.items()}


def _ffn_state(block: nn.Module) -> Tensors:
    mlp = block.mlp
    return {
        'fc1.weight': mlp.fc1.weight,
        'fc1.bias': mlp.fc1.bias,
        'fc2.weight': mlp.fc2.weight,
        'fc2.bias': mlp.fc2.bias
    }
