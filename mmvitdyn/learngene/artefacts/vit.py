"""The Cluster-Learngene learngene of a ViT ancestry (:class:`Learngene`), and the ViT
ancestry description that the ViT-family learngenes (this one, block, TLEG) record."""
import math
from dataclasses import dataclass, field
from typing import ClassVar, Dict, List, Sequence, Tuple

import torch
from mmengine.logging import MMLogger

from ..file_format import (LearngeneFile, Tensors, expect_int, expect_norm, expect_tensor,
                           expect_type, format_settings, require, validate_settings)
from ..head_clustering import HeadCluster
from .layers import (FFNGroup, LearngeneLayer, ffn_group_from_dict, ffn_group_to_dict,
                     layer_from_dict, layer_to_dict, validate_ffn_groups, validate_layer)

POSITIVE_ANCESTRY_KEYS = ('embed_dims', 'num_layers', 'num_heads', 'head_dim',
                          'feedforward_channels', 'patch_size')
# The ViT arguments of the ancestry's family (DeiT, distilled DeiT, DINOv2, CLIP ...).
FAMILY_KEYS = ('norm_eps', 'act_cfg', 'pre_norm', 'layer_scale_init_value', 'num_reg_tokens',
               'dist_token')
ANCESTRY_KEYS = POSITIVE_ANCESTRY_KEYS + ('patch_resolution', 'num_extra_tokens',
                                          'qkv_bias') + FAMILY_KEYS
# The MLP activations (``act_cfg`` types) a ViT-family learngene may name.
ACTIVATIONS = ('GELU', 'QuickGELU')
# The family of every learngene file of version 1 (written before the family
# was recorded): a DeiT's (with its distillation token when it had one).
VERSION_1_FAMILY = dict(
    norm_eps=1e-6,
    act_cfg=dict(type='GELU'),
    pre_norm=False,
    layer_scale_init_value=None,
    num_reg_tokens=0)
LAYER_SCALE_KEYS = ('ls1.gamma', 'ls2.gamma')


def validate_ancestry(ancestry) -> dict:
    """Check a ViT ancestry description (``ViTAncestry.describe()``: widths, heads, patches,
    prefix tokens, ``qkv_bias`` and the family settings ``norm_eps``, ``act_cfg``,
    ``pre_norm``, ``layer_scale_init_value``, ``num_reg_tokens``, ``dist_token``); returns it."""
    expect_type(ancestry, dict, 'ancestry')
    for key in ANCESTRY_KEYS:
        if key not in ancestry:
            raise ValueError(f'learngene ancestry.{key} is missing')
    for key in POSITIVE_ANCESTRY_KEYS:
        expect_int(ancestry[key], f'ancestry.{key}', minimum=1)
    for key in ('qkv_bias', 'pre_norm', 'dist_token'):
        expect_type(ancestry[key], bool, f'ancestry.{key}')
    expect_int(ancestry['num_reg_tokens'], 'ancestry.num_reg_tokens', minimum=0)
    expect_int(ancestry['num_extra_tokens'], 'ancestry.num_extra_tokens', minimum=0)
    prefix = 1 + ancestry['dist_token'] + ancestry['num_reg_tokens']
    allowed = (prefix, ) if prefix > 1 else (1, 0)
    if ancestry['num_extra_tokens'] not in allowed:
        raise ValueError(f"learngene ancestry.num_extra_tokens={ancestry['num_extra_tokens']!r} "
                         f'must be {prefix}: the class token, dist_token='
                         f"{ancestry['dist_token']} and num_reg_tokens="
                         f"{ancestry['num_reg_tokens']}"
                         f"{' (or 0: no class token)' if prefix == 1 else ''}")
    _expect_number(ancestry['norm_eps'], 'ancestry.norm_eps', positive=True)
    if ancestry['layer_scale_init_value'] is not None:
        _expect_number(ancestry['layer_scale_init_value'], 'ancestry.layer_scale_init_value')
    act = ancestry['act_cfg']
    if not isinstance(act, dict) or set(act) != {'type'} or act['type'] not in ACTIVATIONS:
        raise ValueError(f'learngene ancestry.act_cfg={act!r} must be dict(type=T) with T one '
                         f'of {ACTIVATIONS}')
    grid = ancestry['patch_resolution']
    if not isinstance(grid, (list, tuple)) or len(grid) != 2:
        raise ValueError(f'learngene ancestry.patch_resolution={grid!r} must be [rows, cols]')
    for value in grid:
        expect_int(value, 'ancestry.patch_resolution', minimum=1)
    return ancestry


def _expect_number(value, field: str, positive: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(
            value, (int, float)) or not math.isfinite(value) or (positive and value <= 0):
        raise ValueError(f'learngene {field}={value!r} must be a finite number'
                         f'{" > 0" if positive else ""}')


def upgrade_ancestry(ancestry) -> dict:
    """A version-1 ancestry entry with a DeiT's family (:data:`VERSION_1_FAMILY`).

    Raises:
        ValueError: Its prefix tokens are not those of a (distilled) DeiT.
    """
    expect_type(ancestry, dict, 'ancestry')
    extra = ancestry.get('num_extra_tokens')
    if type(extra) is not int or extra not in (1, 2):
        raise ValueError(f'learngene ancestry.num_extra_tokens={extra!r}: a version-1 file '
                         'records no family settings, which only a class token (1) or a class '
                         'and a distillation token (2) do without; rebuild the learngene')
    return {**VERSION_1_FAMILY, 'dist_token': extra == 2, **ancestry}


def warn_version_1(kind: str, missing: str) -> None:
    """Log that a version-1 ``kind`` learngene lacks ``missing``."""
    MMLogger.get_current_instance().warning(
        f'a version-1 {kind} learngene file holds no {missing}: descendants start them at '
        'random; rebuild it to inherit them')


def has_class_token(ancestry: dict) -> bool:
    """Whether the ancestry has a class token (more prefix tokens than distillation token and
    registers)."""
    return ancestry['num_extra_tokens'] > ancestry['dist_token'] + ancestry['num_reg_tokens']


def vit_arguments(ancestry: dict) -> dict:
    """The ``ViT`` arguments that make a descendant compute as the ancestry does (besides widths
    and heads): ``qkv_bias``, ``norm_cfg``, ``act_cfg``, ``pre_norm``,
    ``layer_scale_init_value``, ``num_reg_tokens``, ``dist_token``, ``class_token``."""
    return dict(
        class_token=has_class_token(ancestry),
        qkv_bias=ancestry['qkv_bias'],
        norm_cfg=dict(type='LN', eps=ancestry['norm_eps']),
        act_cfg=dict(ancestry['act_cfg']),
        pre_norm=ancestry['pre_norm'],
        layer_scale_init_value=ancestry['layer_scale_init_value'],
        num_reg_tokens=ancestry['num_reg_tokens'],
        dist_token=ancestry['dist_token'])


def embedding_shapes(ancestry: dict) -> Dict[str, Tuple]:
    """Key -> shape of the ancestry's stem (``ViT.is_stem_param``: patch projection, tokens,
    position embedding, ``norm_pre``); None: any size on that axis (the image channels)."""
    c, p, grid = ancestry['embed_dims'], ancestry['patch_size'], ancestry['patch_resolution']
    class_token = has_class_token(ancestry)
    positions = class_token + ancestry['dist_token'] + grid[0] * grid[1]
    shapes = {'patch_embed.proj.weight': (c, None, p, p)}
    if class_token:
        shapes['cls_token'] = (1, 1, c)
    if ancestry['pre_norm']:
        shapes.update({'norm_pre.weight': (c, ), 'norm_pre.bias': (c, )})
    else:
        shapes['patch_embed.proj.bias'] = (c, )
    if ancestry['dist_token']:
        shapes['dist_token'] = (1, 1, c)
    if ancestry['num_reg_tokens']:
        shapes['reg_token'] = (1, ancestry['num_reg_tokens'], c)
    shapes['pos_embed'] = (1, positions, c)
    return shapes


def validate_embeddings(embeddings, ancestry: dict, optional: bool = False) -> None:
    """Check the ``embeddings``: every key of :func:`embedding_shapes` with its shape and no
    other (or none at all if ``optional``)."""
    expect_type(embeddings, dict, 'embeddings')
    if optional and not embeddings:
        return
    _expect_exactly(embeddings, embedding_shapes(ancestry), 'embeddings', ancestry)


def block_shapes(ancestry: dict) -> Dict[str, Tuple[int, ...]]:
    """Key -> shape of one block's state dict (C wide, H heads of D, FFN F): norms,
    ``attn.qkv`` (3HD, C), ``attn.proj`` (C, HD), ``mlp.fc1`` (F, C), ``mlp.fc2`` (C, F), with
    biases, and ``ls1.gamma``, ``ls2.gamma`` (C, ) of a family with layer scales."""
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
    shapes.update(layer_scale_shapes(ancestry))
    return shapes


def layer_scale_shapes(ancestry: dict) -> Dict[str, Tuple[int]]:
    """``ls1.gamma`` and ``ls2.gamma`` (C, ) of a family with layer scales, else none."""
    if ancestry['layer_scale_init_value'] is None:
        return {}
    return {key: (ancestry['embed_dims'], ) for key in LAYER_SCALE_KEYS}


def validate_block(state, field: str, ancestry: dict) -> None:
    """Check a whole block's state dict: every key of :func:`block_shapes`, its shape, no other."""
    _expect_exactly(state, block_shapes(ancestry), field, ancestry)


def _expect_exactly(state, shapes: Dict[str, Tuple], field: str, ancestry: dict) -> None:
    """``state`` holds the keys of ``shapes``, each of its shape, and no other."""
    expect_type(state, dict, field)
    extra = sorted(set(state) - set(shapes))
    if extra:
        family = ', '.join(f'{key}={ancestry[key]!r}' for key in ('qkv_bias', *FAMILY_KEYS))
        raise ValueError(f'learngene {field} has keys {extra} that the ancestry ({family}) '
                         'does not have')
    for key, shape in shapes.items():
        expect_tensor(require(state, key, field), f'{field}.{key}', shape)


@dataclass
class Learngene(LearngeneFile):
    """A ViT ancestry condensed by Cluster-Learngene.

    Args:
        ancestry (dict): The architecture (see :func:`validate_ancestry`).
        settings (dict): How it was made (clustering method, eps, centroid, images ...).
        mad (Tensor): (num_layers, num_heads) MAD table in pixels.
        embeddings (dict): The ancestry's stem (see :func:`embedding_shapes`).
        final_norm (dict): State dict of the final norm (empty if none).
        layers (list[LearngeneLayer]): One per ancestry layer.
        layer_scales (list[dict]): Per layer ``ls1.gamma`` and ``ls2.gamma`` (C, ), or empty.
        ffn_groups (list[FFNGroup]): A partition of the layers, in order.
    """
    FILE_FORMAT: ClassVar[str] = 'mmvitdyn.learngene'
    FILE_VERSION: ClassVar[int] = 2
    OLDER_VERSIONS: ClassVar[Tuple[int, ...]] = (1, )
    WRITER: ClassVar[str] = 'build_learngene.py'

    ancestry: dict
    settings: dict
    mad: torch.Tensor
    embeddings: Tensors
    final_norm: Tensors
    layers: List[LearngeneLayer]
    layer_scales: List[Tensors]
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
        """Parameters held: heads (+ W^O bias, norms, layer scales), FFNs, embeddings (+ final
        norm), and their total."""
        counts = dict(
            attention=sum(layer.num_parameters()
                          for layer in self.layers) + sum(t.numel() for scales in self.layer_scales
                                                          for t in scales.values()),
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
            'family: ' + format_settings({key: a[key]
                                          for key in FAMILY_KEYS}),
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
        """Check everything inheritance reads; ``ValueError`` names the first bad field."""
        validate_settings(self.settings)
        a = validate_ancestry(self.ancestry)
        c, h = a['embed_dims'], a['num_heads']
        expect_tensor(self.mad, 'mad', (a['num_layers'], h))
        validate_embeddings(self.embeddings, a)
        expect_norm(self.final_norm, 'final_norm', c, optional=True)
        expect_type(self.layers, list, 'layers')
        if len(self.layers) != a['num_layers']:
            raise ValueError(f'learngene has {len(self.layers)} layers, ancestry.num_layers='
                             f"{a['num_layers']}")
        for index, layer in enumerate(self.layers):
            validate_layer(layer, f'layers[{index}]', a['num_heads'], c, a['head_dim'],
                           a['qkv_bias'])
        expect_type(self.layer_scales, list, 'layer_scales')
        if len(self.layer_scales) != a['num_layers']:
            raise ValueError(f'learngene has {len(self.layer_scales)} layer_scales entries, '
                             f"ancestry.num_layers={a['num_layers']}")
        for index, scales in enumerate(self.layer_scales):
            _expect_exactly(scales, layer_scale_shapes(a), f'layer_scales[{index}]', a)
        validate_ffn_groups(self.ffn_groups, 'ffn_groups', a['num_layers'], c,
                            a['feedforward_channels'])

    # ----------------------------------------------------------------- I/O
    @classmethod
    def upgrade(cls, data: dict) -> dict:
        """Version 1: a DeiT's family (see :func:`upgrade_ancestry`), no layer scales."""
        data['ancestry'] = upgrade_ancestry(data.get('ancestry'))
        layers = data.get('layers')
        data['layer_scales'] = [{} for _ in layers] if isinstance(layers, list) else []
        return data

    def encode_field(self, name: str, value):
        if name == 'layer_scales':
            return [dict(scales) for scales in value]
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
