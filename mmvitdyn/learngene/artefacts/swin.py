"""The Cluster-Learngene learngene of a Swin Transformer ancestry (mmpretrain's
``SwinTransformer``): per stage its condensed blocks (with rel-pos-bias columns), FFN groups
and patch merging; the patch embedding and output norms."""
from dataclasses import dataclass, field
from typing import ClassVar, Dict, List

import torch

from ..file_format import (LearngeneFile, Tensors, expect_int, expect_norm, expect_tensor,
                           expect_type, require, validate_settings)
from .layers import (FFNGroup, LearngeneLayer, StagedLearngene, expect_stage_lists,
                     validate_ffn_groups, validate_layer)

# What the learngene records of the ancestry's architecture.
SWIN_ANCESTRY_KEYS = ('embed_dims', 'depths', 'num_heads', 'feedforward_channels', 'window_size',
                      'patch_size', 'patch_resolution', 'qkv_bias', 'out_indices')


@dataclass
class WindowLearngeneLayer(LearngeneLayer):
    """A :class:`LearngeneLayer` of window attention with ``rel_pos_bias`` (c, (2Wh-1)(2Ww-1))."""
    rel_pos_bias: torch.Tensor


@dataclass
class SwinStage:
    """One stage: ``mad`` (depth, heads), ``layers``, ``ffn_groups`` (indices in the stage) and
    its patch merging's state ``downsample`` (empty for the last stage)."""
    mad: torch.Tensor
    layers: List[WindowLearngeneLayer]
    ffn_groups: List[FFNGroup]
    downsample: Tensors


def stage_dims(ancestry: dict) -> List[int]:
    """Token width of each stage (doubled by every patch merging)."""
    return [ancestry['embed_dims'] * 2**s for s in range(len(ancestry['depths']))]


def head_dims(ancestry: dict) -> List[int]:
    """Head width of each stage: its width over its heads."""
    return [c // h for c, h in zip(stage_dims(ancestry), ancestry['num_heads'])]


@dataclass
class SwinLearngene(StagedLearngene, LearngeneFile):
    """The condensed Swin ancestry.

    Args:
        ancestry (dict): See ``SwinAncestry.describe``.
        settings (dict): How it was made.
        embeddings (dict): The patch embedding (``projection``, ``norm``).
        final_norms (dict): ``norm{i}`` of every output index -> its state.
        stages (list[SwinStage]): One per stage.
    """
    FILE_FORMAT: ClassVar[str] = 'mmvitdyn.swin_learngene'
    FILE_VERSION: ClassVar[int] = 1
    WRITER: ClassVar[str] = 'build_learngene.py'
    STAGE: ClassVar[type] = SwinStage
    LAYER: ClassVar[type] = WindowLearngeneLayer

    ancestry: dict
    settings: dict
    embeddings: Tensors
    final_norms: Dict[str, Tensors]
    stages: List[SwinStage] = field(default_factory=list)

    # ------------------------------------------------------------- queries
    def architecture(self) -> str:
        a = self.ancestry
        return (f"Learngene of a Swin: depths {a['depths']}, heads {a['num_heads']} of "
                f"{head_dims(a)}, widths {stage_dims(a)}, window {a['window_size']}, "
                f"patch {a['patch_size']}")

    def num_parameters(self) -> int:
        """Parameters the descendants inherit."""
        tensors = [*self.embeddings.values()]
        tensors += [t for norm in self.final_norms.values() for t in norm.values()]
        for stage in self.stages:
            tensors += [*stage.downsample.values()]
            tensors += [t for g in stage.ffn_groups for t in g.weights.values()]
            for layer in stage.layers:
                tensors += [
                    layer.qkv_weight, layer.proj_weight, layer.proj_bias, layer.rel_pos_bias,
                    *layer.norm1.values(), *layer.norm2.values()
                ]
                if layer.qkv_bias is not None:
                    tensors.append(layer.qkv_bias)
        return sum(t.numel() for t in tensors)

    # ----------------------------------------------------------- validation
    def validate(self) -> None:
        """Check everything inheritance reads; ``ValueError`` names the field."""
        validate_settings(self.settings)
        a = self._validate_ancestry()
        dims, heads, window = stage_dims(a), a['num_heads'], a['window_size']
        p, c = a['patch_size'], a['embed_dims']
        expect_type(self.embeddings, dict, 'embeddings')
        for key, shape in (('projection.weight', (c, None, p, p)), ('projection.bias', (c, )),
                           ('norm.weight', (c, )), ('norm.bias', (c, ))):
            expect_tensor(require(self.embeddings, key, 'embeddings'), f'embeddings.{key}', shape)
        expect_type(self.final_norms, dict, 'final_norms')
        for index in a['out_indices']:
            expect_norm(
                require(self.final_norms, f'norm{index}', 'final_norms'),
                f'final_norms.norm{index}', dims[index])
        table = (2 * window - 1)**2
        for where, s, stage in self.validate_stages():
            for index, layer in enumerate(stage.layers):
                field_ = f'{where}.layers[{index}]'
                expect_type(layer, WindowLearngeneLayer, field_)
                validate_layer(layer, field_, heads[s], dims[s], head_dims(a)[s], a['qkv_bias'])
                expect_tensor(layer.rel_pos_bias, f'{field_}.rel_pos_bias',
                              (layer.num_centroids, table))
            validate_ffn_groups(stage.ffn_groups, f'{where}.ffn_groups', a['depths'][s], dims[s],
                                a['feedforward_channels'][s])
            expect_type(stage.downsample, dict, f'{where}.downsample')
            if s < len(self.stages) - 1:
                for key, shape in (('norm.weight', (4 * dims[s], )), ('norm.bias', (4 * dims[s], )),
                                   ('reduction.weight', (2 * dims[s], 4 * dims[s]))):
                    expect_tensor(
                        require(stage.downsample, key, f'{where}.downsample'),
                        f'{where}.downsample.{key}', shape)

    def _validate_ancestry(self) -> dict:
        expect_type(self.ancestry, dict, 'ancestry')
        a = self.ancestry
        for key in SWIN_ANCESTRY_KEYS:
            if key not in a:
                raise ValueError(f'learngene ancestry.{key} is missing')
        for key in ('embed_dims', 'window_size', 'patch_size'):
            expect_int(a[key], f'ancestry.{key}', minimum=1)
        stages = expect_stage_lists(a, ('depths', 'num_heads', 'feedforward_channels'))
        for dims, h in zip(stage_dims(a), a['num_heads']):
            if dims % h:
                raise ValueError(f'learngene ancestry.num_heads={a["num_heads"]} do not divide '
                                 f'the stage widths {stage_dims(a)}')
        expect_type(a['qkv_bias'], bool, 'ancestry.qkv_bias')
        grid = a['patch_resolution']
        if not isinstance(grid, list) or len(grid) != 2:
            raise ValueError(f'learngene ancestry.patch_resolution={grid!r} must be [rows, cols]')
        for value in grid:
            expect_int(value, 'ancestry.patch_resolution', minimum=1)
        expect_type(a['out_indices'], list, 'ancestry.out_indices')
        for index in a['out_indices']:
            if not isinstance(index, int) or not 0 <= index < stages:
                raise ValueError(f"learngene ancestry.out_indices={a['out_indices']} must be "
                                 f'stages 0..{stages - 1}')
        return a

    # ----------------------------------------------------------------- I/O
    def encode_field(self, name: str, value):
        if name == 'final_norms':
            return {key: dict(norm) for key, norm in value.items()}
        return super().encode_field(name, value)
