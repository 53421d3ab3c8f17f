"""The learngenes of a LeViT ancestry (mmpretrain's ``LeViT``): Cluster-Learngene's (per stage
its condensed attention blocks, with BatchNorm channels and statistics, FFN groups and subsample
attention; the convolutional stem) and the Heuristic- / Auto-Learngene baselines' (whole blocks)."""
from dataclasses import dataclass, field
from typing import ClassVar, Dict, List, Optional, Tuple

import torch

from ..file_format import (LearngeneFile, Tensors, expect_int, expect_tensor, expect_type, require,
                           validate_settings)
from ..head_clustering import HeadCluster
from .block import block_sources, learngene_blocks
from .layers import (FFNGroup, StagedLearngene, expect_stage_lists, validate_clusters,
                     validate_ffn_groups)

# What the learngene records of the ancestry's architecture: lists of one
# int per stage, and ints.
PER_STAGE_KEYS = ('embed_dims', 'key_dims', 'num_heads', 'depths', 'resolutions')
INT_KEYS = ('attn_ratio', 'mlp_ratio', 'patch_size')
BN_KEYS = ('weight', 'bias', 'running_mean', 'running_var')
# The entries of a LeViT attention's state that hold one slice per head, and
# the axis the heads lie along: the rows of the Q/K/V map (per head: its
# queries, keys and values) with their BatchNorm channels, the columns of
# W^O, the rows of the attention-bias table.
HEAD_AXES = {'qkv.linear.weight': 0, 'proj.1.linear.weight': 1, 'attention_biases': 0}
HEAD_AXES.update({f'qkv.bn.{key}': 0 for key in BN_KEYS})


def split_heads(tensor: torch.Tensor, num_heads: int, axis: int) -> torch.Tensor:
    """(..., H * n, ...) with the heads along ``axis`` -> (H, ..., n, ...)."""
    return tensor.unflatten(axis, (num_heads, -1)).movedim(axis, 0)


def merge_heads(tensor: torch.Tensor, axis: int) -> torch.Tensor:
    """Inverse of :func:`split_heads`: (H, ..., n, ...) -> (..., H * n, ...)."""
    return tensor.movedim(0, axis).flatten(axis, axis + 1)


def mlp_shapes(embed_dims: int, hidden: int) -> Dict[str, Tuple[int, ...]]:
    """Key -> shape of a LeViT MLP's state (C -> F -> C, ``LinearBatchNorm`` maps, statistics
    included)."""
    shapes = {'linear1.linear.weight': (hidden, embed_dims)}
    shapes.update({f'linear1.bn.{key}': (hidden, ) for key in BN_KEYS})
    shapes['linear2.linear.weight'] = (embed_dims, hidden)
    shapes.update({f'linear2.bn.{key}': (embed_dims, ) for key in BN_KEYS})
    return shapes


MLP_KEYS = tuple(mlp_shapes(1, 1))


def head_shapes(ancestry: dict, stage: int) -> Dict[str, Tuple[int, ...]]:
    """Key of :data:`HEAD_AXES` -> shape of one head's slice in ``stage``: Q/K/V rows, W^O
    columns (C, value dim), bias row over the stage's r^2 grid offsets."""
    c, kd = ancestry['embed_dims'][stage], ancestry['key_dims'][stage]
    rows = 2 * kd + ancestry['attn_ratio'] * kd
    shapes = {'qkv.linear.weight': (rows, c)}
    shapes.update({f'qkv.bn.{key}': (rows, ) for key in BN_KEYS})
    shapes['proj.1.linear.weight'] = (c, ancestry['attn_ratio'] * kd)
    shapes['attention_biases'] = (1, ancestry['resolutions'][stage]**2)
    return shapes


def downsample_heads(ancestry: dict, stage: int) -> int:
    """Heads of the subsample attention before ``stage`` (previous width over the key width)."""
    return ancestry['embed_dims'][stage - 1] // ancestry['key_dims'][stage]


def is_statistic(key: str) -> bool:
    """Whether a state entry is a BatchNorm running statistic (not a parameter)."""
    return key.endswith(('running_mean', 'running_var'))


@dataclass
class LeViTLayer:
    """One attention block of a LeViT stage, condensed to its head centroids.

    Args:
        clusters (list[HeadCluster]): Head clusters in priority order.
        heads (dict): Key of :data:`HEAD_AXES` -> (c, ...), every centroid's slice.
        proj_bn (dict): The BatchNorm after W^O (weight, bias, running mean, var; (C, ) each).
    """
    clusters: List[HeadCluster]
    heads: Tensors
    proj_bn: Tensors

    @property
    def num_centroids(self) -> int:
        return len(self.clusters)


@dataclass
class LeViTStage:
    """One stage: ``mad`` (depth, heads), ``layers``, ``ffn_groups`` (indices in the stage),
    and its subsample attention's ``downsample``, ``downsample_mlp``, ``downsample_mad``
    (heads, ) (empty and None in the first stage)."""
    mad: torch.Tensor
    layers: List[LeViTLayer]
    ffn_groups: List[FFNGroup]
    downsample: Tensors
    downsample_mlp: Tensors
    downsample_mad: Optional[torch.Tensor]

    def group_of(self, layer: int) -> int:
        """The index of block ``layer``'s FFN group."""
        return next(g for g, group in enumerate(self.ffn_groups) if layer in group.layers)


@dataclass
class LeViTLearngene(StagedLearngene, LearngeneFile):
    """The condensed LeViT ancestry.

    Args:
        ancestry (dict): See ``LeViTAncestry.describe``.
        settings (dict): How it was made.
        embeddings (dict): The state of the convolutional stem.
        stages (list[LeViTStage]): One per stage.
    """
    FILE_FORMAT: ClassVar[str] = 'mmvitdyn.levit_learngene'
    FILE_VERSION: ClassVar[int] = 1
    WRITER: ClassVar[str] = 'build_learngene.py'
    STAGE: ClassVar[type] = LeViTStage
    LAYER: ClassVar[type] = LeViTLayer

    ancestry: dict
    settings: dict
    embeddings: Tensors
    stages: List[LeViTStage] = field(default_factory=list)

    # ------------------------------------------------------------- queries
    def architecture(self) -> str:
        a = self.ancestry
        return (f"Learngene of a LeViT: widths {a['embed_dims']}, depths {a['depths']}, "
                f"heads {a['num_heads']} of key width {a['key_dims']}, grids "
                f"{a['resolutions']}")

    def num_parameters(self) -> int:
        """Parameters the descendants inherit (BatchNorm statistics apart)."""
        states = [self.embeddings]
        for stage in self.stages:
            states += [stage.downsample, stage.downsample_mlp]
            states += [group.weights for group in stage.ffn_groups]
            states += [state for layer in stage.layers for state in (layer.heads, layer.proj_bn)]
        return sum(t.numel() for state in states for key, t in state.items()
                   if not is_statistic(key))

    # ----------------------------------------------------------- validation
    def validate(self) -> None:
        """Check everything inheritance reads; ``ValueError`` names the field."""
        validate_settings(self.settings)
        a = validate_ancestry(self.ancestry)
        _expect_state(self.embeddings, 'embeddings')
        for where, s, stage in self.validate_stages():
            c, heads, depth = a['embed_dims'][s], a['num_heads'][s], a['depths'][s]
            shapes = head_shapes(a, s)
            for index, layer in enumerate(stage.layers):
                field_ = f'{where}.layers[{index}]'
                expect_type(layer, LeViTLayer, field_)
                validate_clusters(layer.clusters, field_, heads)
                expect_type(layer.heads, dict, f'{field_}.heads')
                for key, shape in shapes.items():
                    expect_tensor(
                        require(layer.heads, key, f'{field_}.heads'), f'{field_}.heads.{key}',
                        (layer.num_centroids, *shape))
                expect_type(layer.proj_bn, dict, f'{field_}.proj_bn')
                for key in BN_KEYS:
                    expect_tensor(
                        require(layer.proj_bn, key, f'{field_}.proj_bn'), f'{field_}.proj_bn.{key}',
                        (c, ))
            validate_ffn_groups(stage.ffn_groups, f'{where}.ffn_groups', depth, c,
                                c * a['mlp_ratio'], mlp_shapes)
            if s == 0:
                if stage.downsample or stage.downsample_mlp or stage.downsample_mad is not None:
                    raise ValueError(f'learngene {where} has a subsample attention; LeViT has '
                                     'none before its first stage')
                continue
            _expect_state(stage.downsample, f'{where}.downsample')
            _expect_state(stage.downsample_mlp, f'{where}.downsample_mlp')
            expect_tensor(stage.downsample_mad, f'{where}.downsample_mad',
                          (downsample_heads(a, s), ))


def validate_ancestry(ancestry) -> dict:
    """The ``ancestry`` entry of a LeViT learngene, checked (:data:`PER_STAGE_KEYS`,
    :data:`INT_KEYS`)."""
    expect_type(ancestry, dict, 'ancestry')
    for key in PER_STAGE_KEYS + INT_KEYS:
        if key not in ancestry:
            raise ValueError(f'learngene ancestry.{key} is missing')
    for key in INT_KEYS:
        expect_int(ancestry[key], f'ancestry.{key}', minimum=1)
    expect_stage_lists(ancestry, PER_STAGE_KEYS)
    return ancestry


def _expect_state(state, where: str) -> None:
    """A non-empty dict of finite floating tensors (shapes checked on inheriting)."""
    expect_type(state, dict, where)
    if not state:
        raise ValueError(f'learngene {where} is empty')
    for key, value in state.items():
        expect_type(value, torch.Tensor, f'{where}.{key}')
        expect_tensor(value, f'{where}.{key}', (None, ) * value.dim())


def block_positions(depths: List[int]) -> List[Tuple[int, int]]:
    """(stage, block in the stage) of every attention block of a LeViT with these ``depths``,
    numbered over all stages in order."""
    return [(s, b) for s, depth in enumerate(depths) for b in range(depth)]


def attention_shapes(ancestry: dict, stage: int) -> Dict[str, Tuple[int, ...]]:
    """Key -> shape of the whole state of an attention block of ``stage`` (all its heads)."""
    shapes = {}
    for key, shape in head_shapes(ancestry, stage).items():
        merged = list(shape)
        merged[HEAD_AXES[key]] *= ancestry['num_heads'][stage]
        shapes[key] = tuple(merged)
    shapes.update({f'proj.1.bn.{key}': (ancestry['embed_dims'][stage], ) for key in BN_KEYS})
    return shapes


@dataclass
class LeViTBlockLearngene(LearngeneFile):
    """Whole attention blocks of a LeViT ancestry with their MLPs, its stem and subsample
    attentions: the Heuristic- or Auto-Learngene learngene of a LeViT.

    Args:
        method (str): 'heuristic' or 'auto'.
        ancestry (dict): See ``LeViTAncestry.describe``.
        layers (tuple[int]): The ancestry block (see :func:`block_positions`) each of ``blocks``
            is.
        blocks (list[dict]): Per block ``attn`` and ``mlp``, the states of the attention and of
            its MLP (BatchNorm statistics included).
        embeddings (dict): The state of the convolutional stem.
        downsamples, downsample_mlps (list[dict]): Per stage the state of its subsample
            attention and of that attention's MLP (empty for the first stage).
        settings (dict): How it was made (recorded as is).
    """
    FILE_FORMAT: ClassVar[str] = 'mmvitdyn.levit_block_learngene'
    FILE_VERSION: ClassVar[int] = 1
    WRITER: ClassVar[str] = 'extract_baseline_learngene.py'

    method: str
    ancestry: dict
    layers: Tuple[int, ...]
    blocks: List[Dict[str, Tensors]]
    embeddings: Tensors
    downsamples: List[Tensors]
    downsample_mlps: List[Tensors]
    settings: dict = field(default_factory=dict)

    def sources(self, depths: List[int]) -> List[List[Optional[int]]]:
        """Per stage of a descendant with ``depths``, the learngene block of each block (None:
        random): :func:`~.block.block_sources` over the blocks of all stages in order.

        Raises:
            ValueError: A block would land in another stage than its ancestry block's.
        """
        flat = block_sources(self.method, len(self.blocks), sum(depths))
        ancestry_stage = [s for s, _ in block_positions(self.ancestry['depths'])]
        for (s, _), source in zip(block_positions(depths), flat):
            if source is not None and ancestry_stage[self.layers[source]] != s:
                layer = self.layers[source]
                raise ValueError(
                    f'depths={depths}: the {self.method} learngene would put ancestry block '
                    f'{layer} (of stage {ancestry_stage[layer]}) in stage {s}; a block keeps its '
                    f"stage (ancestry depths {self.ancestry['depths']})")
        starts = [sum(depths[:s]) for s in range(len(depths))]
        return [flat[start:start + depth] for start, depth in zip(starts, depths)]

    def num_parameters(self) -> int:
        """Parameters the descendants inherit (BatchNorm statistics apart)."""
        states = [self.embeddings, *self.downsamples, *self.downsample_mlps]
        states += [state for block in self.blocks for state in block.values()]
        return sum(t.numel() for state in states for key, t in state.items()
                   if not is_statistic(key))

    def summary(self) -> str:
        a = self.ancestry
        return (f'{self.method} learngene of a LeViT (widths {a["embed_dims"]}, depths '
                f'{a["depths"]}): ancestry blocks {list(self.layers)} of '
                f'{len(block_positions(a["depths"]))}, stem and subsample attentions; '
                f'{self.num_parameters() / 1e6:.3f}M parameters')

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first missing, mistyped or mis-shaped field."""
        expect_type(self.method, str, 'method')
        a = validate_ancestry(self.ancestry)
        positions = block_positions(a['depths'])
        expected = tuple(learngene_blocks(self.method, len(positions)))
        expect_type(self.layers, tuple, 'layers')
        if self.layers != expected:
            raise ValueError(f'learngene layers={list(self.layers)}; the {self.method} learngene '
                             f'of a LeViT of {len(positions)} blocks holds blocks {list(expected)}')
        expect_type(self.blocks, list, 'blocks')
        if len(self.blocks) != len(self.layers):
            raise ValueError(f'learngene has {len(self.blocks)} blocks for layers '
                             f'{list(self.layers)}')
        for index, (block, layer) in enumerate(zip(self.blocks, self.layers)):
            s = positions[layer][0]
            c = a['embed_dims'][s]
            expect_type(block, dict, f'blocks[{index}]')
            for part, shapes in (('attn', attention_shapes(a, s)),
                                 ('mlp', mlp_shapes(c, c * a['mlp_ratio']))):
                state = require(block, part, f'blocks[{index}]')
                expect_type(state, dict, f'blocks[{index}].{part}')
                for key, shape in shapes.items():
                    expect_tensor(
                        require(state, key, f'blocks[{index}].{part}'),
                        f'blocks[{index}].{part}.{key}', shape)
        _expect_state(self.embeddings, 'embeddings')
        for name in ('downsamples', 'downsample_mlps'):
            states = getattr(self, name)
            expect_type(states, list, name)
            if len(states) != len(a['depths']):
                raise ValueError(f'learngene {name} has {len(states)} entries for '
                                 f"{len(a['depths'])} stages")
            if states[0]:
                raise ValueError(f'learngene {name}[0] is not empty; LeViT has no subsample '
                                 'attention before its first stage')
            for s, state in enumerate(states[1:], 1):
                _expect_state(state, f'{name}[{s}]')
        validate_settings(self.settings)

    @classmethod
    def decode_field(cls, name: str, value):
        return tuple(value) if name == 'layers' and isinstance(value, list) else value

    def encode_field(self, name: str, value):
        if name == 'layers':
            return list(value)
        if name == 'blocks':
            return [{part: dict(state) for part, state in block.items()} for block in value]
        return super().encode_field(name, value)
