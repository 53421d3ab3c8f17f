"""The Cluster-Learngene learngene of a ViT ancestry, and the ViT ancestry
description that the ViT-family learngenes (this one, the block and TLEG
baselines) record.

A learngene holds what descendants inherit from the ancestry: per layer the
head centroids in priority order (per head Q/K/V rows and biases, the
head's W^O column slice), the layer's W^O bias and norms; the FFN groups,
each with one FFN; the embeddings (patch embedding, class token, position
embedding) and final norm; plus the ancestry's architecture, the MAD table,
the clusters (members, MAD) and the settings that produced them.
"""
from dataclasses import dataclass, field
from typing import ClassVar, Dict, List, Sequence, Tuple

import torch

from ..file_format import (LearngeneFile, Tensors, expect_int, expect_norm, expect_tensor,
                           expect_type, format_settings, require, validate_settings)
from ..head_clustering import HeadCluster
from .layers import (FFNGroup, LearngeneLayer, ffn_group_from_dict, ffn_group_to_dict,
                     layer_from_dict, layer_to_dict, validate_ffn_groups, validate_layer)

POSITIVE_ANCESTRY_KEYS = ('embed_dims', 'num_layers', 'num_heads', 'head_dim',
                          'feedforward_channels', 'patch_size')
ANCESTRY_KEYS = POSITIVE_ANCESTRY_KEYS + ('patch_resolution', 'num_extra_tokens', 'qkv_bias')


def validate_ancestry(ancestry) -> dict:
    """Check a ViT ancestry description (:class:`~..ancestries.ViTAncestry`'s
    ``describe()``: ``embed_dims``, ``num_layers``, ``num_heads``,
    ``head_dim``, ``feedforward_channels``, ``patch_size``,
    ``patch_resolution``, ``num_extra_tokens``, ``qkv_bias``); returns it."""
    expect_type(ancestry, dict, 'ancestry')
    for key in ANCESTRY_KEYS:
        if key not in ancestry:
            raise ValueError(f'learngene ancestry.{key} is missing')
    for key in POSITIVE_ANCESTRY_KEYS:
        expect_int(ancestry[key], f'ancestry.{key}', minimum=1)
    expect_int(ancestry['num_extra_tokens'], 'ancestry.num_extra_tokens', minimum=0)
    expect_type(ancestry['qkv_bias'], bool, 'ancestry.qkv_bias')
    grid = ancestry['patch_resolution']
    if not isinstance(grid, (list, tuple)) or len(grid) != 2:
        raise ValueError(f'learngene ancestry.patch_resolution={grid!r} must be [rows, cols]')
    for value in grid:
        expect_int(value, 'ancestry.patch_resolution', minimum=1)
    return ancestry


def block_shapes(ancestry: dict) -> Dict[str, Tuple[int, ...]]:
    """Key -> shape of the state dict of one block of the ancestry (C wide,
    H heads of D, FFN F): norms, ``attn.qkv`` (3HD, C), ``attn.proj`` (C, HD),
    ``mlp.fc1`` (F, C), ``mlp.fc2`` (C, F), with their biases."""
    c, inner, f = ancestry['embed_dims'], ancestry['num_heads'] * ancestry['head_dim'], \
        ancestry['feedforward_channels']
    shapes = {
        'norm1.weight': (c, ), 'norm1.bias': (c, ),
        'attn.qkv.weight': (3 * inner, c),
        'attn.proj.weight': (c, inner), 'attn.proj.bias': (c, ),
        'norm2.weight': (c, ), 'norm2.bias': (c, ),
        'mlp.fc1.weight': (f, c), 'mlp.fc1.bias': (f, ),
        'mlp.fc2.weight': (c, f), 'mlp.fc2.bias': (c, ),
    }  # yapf: disable
    if ancestry['qkv_bias']:
        shapes['attn.qkv.bias'] = (3 * inner, )
    return shapes


def validate_block(state, field: str, ancestry: dict) -> None:
    """Check a whole block's state dict: every key of :func:`block_shapes`
    with its shape, and no other."""
    shapes = block_shapes(ancestry)
    expect_type(state, dict, field)
    extra = sorted(set(state) - set(shapes))
    if extra:
        raise ValueError(f'learngene {field} has keys {extra} that a block of the ancestry '
                         f'(qkv_bias={ancestry["qkv_bias"]}) does not have')
    for key, shape in shapes.items():
        expect_tensor(require(state, key, field), f'{field}.{key}', shape)


@dataclass
class Learngene(LearngeneFile):
    """A ViT ancestry condensed by Cluster-Learngene; see the module docstring.

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
    FILE_FORMAT: ClassVar[str] = 'mmvitdyn.learngene'
    FILE_VERSION: ClassVar[int] = 1
    WRITER: ClassVar[str] = 'build_learngene.py'

    ancestry: dict
    settings: dict
    mad: torch.Tensor
    embeddings: Tensors
    final_norm: Tensors
    layers: List[LearngeneLayer]
    ffn_groups: List[FFNGroup] = field(default_factory=list)

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

    def mad_columns(self) -> List[Tuple[str, torch.Tensor, Sequence[HeadCluster]]]:
        """(label, MAD of its heads, clusters) of every layer, for :func:`plot_mad`."""
        return [(str(index), self.mad[index], layer.clusters)
                for index, layer in enumerate(self.layers)]

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
    def encode_field(self, name: str, value):
        if name == 'layers':
            return [layer_to_dict(layer) for layer in value]
        if name == 'ffn_groups':
            return [ffn_group_to_dict(group) for group in value]
        return super().encode_field(name, value)

    @classmethod
    def decode_field(cls, name: str, value):
        if name == 'layers':
            expect_type(value, list, 'layers')
            return [layer_from_dict(layer, f'layers[{i}]') for i, layer in enumerate(value)]
        if name == 'ffn_groups':
            expect_type(value, list, 'ffn_groups')
            return [ffn_group_from_dict(group, f'ffn_groups[{i}]') for i, group in enumerate(value)]
        return value
