"""The LeViT ancestry family (mmpretrain's ``LeViT``): its MAD recorder, condense and extract
steps (stem and subsample attentions kept whole), and the Heuristic- / Auto-Learngene blocks."""
import math
from contextlib import contextmanager
from typing import Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import torch
from mmcv.cnn import build_activation_layer
from mmpretrain.models import LeViT
from mmpretrain.models.backbones.levit import MLP, Attention, AttentionSubsample
from torch import nn

from ..artefacts.block import learngene_blocks
from ..artefacts.levit import (HEAD_AXES, MLP_KEYS, LeViTBlockLearngene, LeViTLayer, LeViTLearngene,
                               LeViTStage, block_positions, split_heads)
from ..attention_distance import attention_distance, patch_distances
from ..ffn_grouping import Groups
from ..file_format import Tensors
from ..head_clustering import HeadCluster
from .base import StagedAncestry, ancestry_for, check_centroid, condense_ffns, pick_heads, substate

# The activation LeViT computes with (mmcv's HSwish, torch's Hardswish).
HSWISH = dict(type='HSwish')


class StageLayout(NamedTuple):
    """Positions in a LeViT stage (an ``nn.Sequential``): ``downsample``, of the subsample
    attention and its MLP (None in the first stage), and ``blocks``, of every attention block
    and its MLP (each in a ``Residual``)."""
    downsample: Optional[Tuple[int, int]]
    blocks: List[Tuple[int, int]]


def stage_layout(stage: nn.Sequential) -> StageLayout:
    """The :class:`StageLayout` of a LeViT stage.

    Raises:
        ValueError: The stage has no MLPs (``mlp_ratio=0``).
    """
    start = 2 if isinstance(stage[0], AttentionSubsample) else 0
    modules = list(stage)[start:]
    if not all(isinstance(m.block, MLP) for m in modules[1::2]) or len(modules) % 2:
        raise ValueError('a LeViT without MLPs (mlp_ratio=0) has no FFNs to group; Cluster-'
                         'Learngene reads LeViTs with mlp_ratio >= 1')
    return StageLayout((0, 1) if start else None, [(i, i + 1) for i in range(start, len(stage), 2)])


def stem_stride(backbone: LeViT) -> int:
    """The stride of the convolutional stem in pixels (16 in LeViT)."""
    return math.prod(m.stride[0] for m in backbone.patch_embed.modules()
                     if isinstance(m, nn.Conv2d))


def floating_state(module: nn.Module) -> Tensors:
    """Detached copies of the parameters and BatchNorm statistics of ``module``."""
    return {
        key: value.detach().clone()
        for key, value in module.state_dict().items() if value.is_floating_point()
    }


def attention_probs(attn: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Softmax attention (float32) of a LeViT ``Attention`` or ``AttentionSubsample`` on its
    input ``x`` (B, N, C), as its forward computes it.

    Returns:
        Tensor: (B, H, M, N), M queries (N, or the subsampled grid's).
    """
    b, n, _ = x.shape
    h, kd = attn.num_heads, attn.key_dim
    if isinstance(attn, AttentionSubsample):
        k = attn.kv(x).view(b, n, h, -1)[..., :kd]
        q = attn.q(x).view(b, -1, h, kd)
    else:
        q, k = attn.qkv(x).view(b, n, h, -1)[..., :2 * kd].split(kd, dim=-1)
    scores = q.transpose(1, 2).float() @ k.permute(0, 2, 3, 1).float() * attn.scale
    return (scores + attn.attention_biases[:, attn.attention_bias_idxs].float()).softmax(-1)


def query_distances(side: int, stride: int, pixels: float, device=None) -> torch.Tensor:
    """Pixel distances between the queries and keys of an attention over a ``side`` x ``side``
    grid of ``pixels`` px: every point, or with ``stride`` > 1 the points (stride a, stride b).

    Returns:
        Tensor: (M, side * side), M = side^2, or ceil(side / stride)^2.
    """
    distances = patch_distances((side, side), pixels, device=device)
    return distances.view(side, side, -1)[::stride, ::stride].flatten(0, 1)


class LeViTMAD(NamedTuple):
    """The MAD of a LeViT: ``blocks``, one (depth_s, heads_s) table per stage, and
    ``downsamples``, per stage the (heads, ) MAD of its subsample attention (None for the first)."""
    blocks: List[torch.Tensor]
    downsamples: List[Optional[torch.Tensor]]


class LeViTAttentionDistanceRecorder:
    """Accumulates the MAD (in input pixels) of every head of a LeViT, in its attention blocks
    and subsample attentions; use as :class:`~.vit.AttentionDistanceRecorder`.

    Args:
        backbone (LeViT): The ancestry.
    """

    def __init__(self, backbone: LeViT):
        self.backbone = backbone
        self.layouts = [stage_layout(stage) for stage in backbone.stages]
        # The side of a grid cell of every stage, in pixels.
        self.pixels = [stem_stride(backbone)]
        for stage, layout in zip(backbone.stages[1:], self.layouts[1:]):
            self.pixels.append(self.pixels[-1] * stage[layout.downsample[0]].stride)
        # (stage, block or None for the subsample attention) -> MAD summed over images.
        self._sums: Dict[Tuple[int, Optional[int]], torch.Tensor] = {}
        self.num_images = 0
        self._distances: Dict[tuple, torch.Tensor] = {}

    def _images_hook(self, module, args):
        self.num_images += args[0].shape[0]

    def _distances_for(self, side: int, stride: int, pixels: float, device) -> torch.Tensor:
        key = (side, stride, pixels, str(device))
        if key not in self._distances:
            self._distances[key] = query_distances(side, stride, pixels, device)
        return self._distances[key]

    def _hook(self, stage: int, block: Optional[int]):
        """A pre-hook adding the MAD of ``block`` of ``stage`` (None: its subsample attention)."""

        def hook(module, args):
            x = args[0].detach()
            if block is None:  # keys on the previous stage's grid
                side, stride, pixels = module.resolution, module.stride, self.pixels[stage - 1]
            else:
                side, stride, pixels = self.backbone.resolutions[stage], 1, self.pixels[stage]
            mad = attention_distance(
                attention_probs(module, x), self._distances_for(side, stride, pixels, x.device))
            self._sums[stage, block] = self._sums.get((stage, block), 0) + mad.sum(0).double()

        return hook

    @contextmanager
    def recording(self) -> Iterator['LeViTAttentionDistanceRecorder']:
        """Within the context, forward passes of the backbone are recorded."""
        handles = [self.backbone.patch_embed.register_forward_pre_hook(self._images_hook)]
        for s, (stage, layout) in enumerate(zip(self.backbone.stages, self.layouts)):
            if layout.downsample is not None:
                handles.append(stage[layout.downsample[0]].register_forward_pre_hook(
                    self._hook(s, None)))
            for b, (attn, _) in enumerate(layout.blocks):
                handles.append(stage[attn].block.register_forward_pre_hook(self._hook(s, b)))
        try:
            yield self
        finally:
            for handle in handles:
                handle.remove()

    def mean(self) -> LeViTMAD:
        """The :class:`LeViTMAD` averaged over the recorded images."""
        if self.num_images == 0:
            raise RuntimeError('no images were recorded; run the backbone inside recording()')

        def average(stage: int, block: Optional[int]) -> torch.Tensor:
            return (self._sums[stage, block] / self.num_images).float().cpu()

        return LeViTMAD([
            torch.stack([average(s, b) for b in range(len(layout.blocks))])
            for s, layout in enumerate(self.layouts)
        ], [
            None if layout.downsample is None else average(s, None)
            for s, layout in enumerate(self.layouts)
        ])


class LeViTAncestry(StagedAncestry):
    """An mmpretrain ``LeViT`` ancestry, not deployed, with HSwish activations and MLPs.

    Args:
        backbone (LeViT): The ancestry.
    """
    FAMILY = 'LeViT'

    def describe(self) -> dict:
        """Per stage ``embed_dims``, ``key_dims``, ``num_heads``, ``depths``, ``resolutions``;
        ``attn_ratio``, ``mlp_ratio`` and ``patch_size`` (the stem's stride).

        Raises:
            ValueError: The LeViT is deployed, has other activations or no MLPs.
        """
        backbone = self.backbone
        if backbone.deploy:
            raise ValueError('a deployed LeViT (deploy=True: BatchNorms fused into the linear '
                             'maps) cannot be condensed; use it before switch_to_deploy()')
        layouts = [stage_layout(stage) for stage in backbone.stages]
        hswish = type(build_activation_layer(HSWISH))
        modules = list(backbone.stages.modules())
        activations = [m.activation for m in modules if isinstance(m, MLP)]
        activations += [
            m.proj[0] for m in modules if isinstance(m, (Attention, AttentionSubsample))
        ]
        other = sorted({type(m).__name__ for m in activations if type(m) is not hswish})
        if other:
            raise ValueError(f'the LeViT computes with {other}; Cluster-Learngene reads LeViTs '
                             f'with act_cfg={HSWISH}')
        first_attn, first_mlp = (backbone.stages[0][i].block for i in layouts[0].blocks[0])
        return dict(
            embed_dims=list(backbone.embed_dims),
            key_dims=list(backbone.key_dims),
            num_heads=list(backbone.num_heads),
            depths=[len(layout.blocks) for layout in layouts],
            resolutions=list(backbone.resolutions),
            attn_ratio=first_attn.attn_ratio,
            mlp_ratio=first_mlp.linear1.linear.out_features // backbone.embed_dims[0],
            patch_size=stem_stride(backbone))

    def recorder(self) -> LeViTAttentionDistanceRecorder:
        return LeViTAttentionDistanceRecorder(self.backbone)

    def stage_depths(self) -> List[int]:
        return [len(stage_layout(stage).blocks) for stage in self.backbone.stages]

    def stage_tables(self, mad: LeViTMAD) -> List[torch.Tensor]:
        """The attention blocks' tables (``mad.blocks``)."""
        return mad.blocks

    @torch.no_grad()
    def extract(self,
                mad: LeViTMAD,
                clusters: Sequence[Sequence[Sequence[HeadCluster]]],
                ffn_groups: Sequence[Groups],
                centroid: str = 'select',
                settings: Optional[dict] = None) -> LeViTLearngene:
        """Condense the LeViT given its MAD, per stage every block's clusters and FFN groups."""
        check_centroid(centroid)
        backbone = self.backbone
        ancestry = self.describe()
        stages = []
        for s, stage in enumerate(backbone.stages):
            layout = stage_layout(stage)
            layers = [
                condense_levit_attention(stage[attn].block, block_clusters, centroid)
                for (attn, _), block_clusters in zip(layout.blocks, clusters[s])
            ]

            def mlp_of(block: int, stage=stage, layout=layout) -> Tensors:
                return floating_state(stage[layout.blocks[block][1]].block)

            downsample = dict(downsample={}, downsample_mlp={}, downsample_mad=None)
            if layout.downsample is not None:
                attn, mlp = layout.downsample
                downsample = dict(
                    downsample=floating_state(stage[attn]),
                    downsample_mlp=floating_state(stage[mlp].block),
                    downsample_mad=mad.downsamples[s].detach().cpu().float().clone())
            stages.append(
                LeViTStage(
                    mad=mad.blocks[s].detach().cpu().float().clone(),
                    layers=layers,
                    ffn_groups=condense_ffns(ffn_groups[s], mlp_of, centroid, MLP_KEYS),
                    **downsample))
        learngene = LeViTLearngene(ancestry, dict(settings or {}, centroid=centroid),
                                   floating_state(backbone.patch_embed), stages)
        learngene.validate()
        return learngene

    @torch.no_grad()
    def extract_blocks(self, method: str, settings: Optional[dict] = None) -> LeViTBlockLearngene:
        """The Heuristic- or Auto-Learngene learngene (``method``): the attention blocks
        :func:`~..artefacts.block.learngene_blocks` names over the blocks of all stages in order,
        whole with their MLPs, and the stem and subsample attentions (with their MLPs)."""
        backbone = self.backbone
        ancestry = self.describe()
        layouts = [stage_layout(stage) for stage in backbone.stages]
        positions = block_positions(ancestry['depths'])
        layers = learngene_blocks(method, len(positions))
        blocks = []
        for s, b in (positions[layer] for layer in layers):
            attn, mlp = layouts[s].blocks[b]
            blocks.append(
                dict(
                    attn=floating_state(backbone.stages[s][attn].block),
                    mlp=floating_state(backbone.stages[s][mlp].block)))
        downsamples = [
            {} if layout.downsample is None else floating_state(stage[layout.downsample[0]])
            for stage, layout in zip(backbone.stages, layouts)
        ]
        downsample_mlps = [
            {} if layout.downsample is None else floating_state(stage[layout.downsample[1]].block)
            for stage, layout in zip(backbone.stages, layouts)
        ]
        learngene = LeViTBlockLearngene(method, ancestry, tuple(layers), blocks,
                                        floating_state(backbone.patch_embed), downsamples,
                                        downsample_mlps, dict(settings or {}))
        learngene.validate()
        return learngene


def condense_levit_attention(attn: Attention, clusters: Sequence[HeadCluster],
                             centroid: str) -> LeViTLayer:
    """The :class:`LeViTLayer` of a LeViT attention block, given its head clusters in priority
    order (``centroid``: see ``pick_heads``)."""
    state = floating_state(attn)
    heads = {
        key: pick_heads(split_heads(state[key], attn.num_heads, axis), clusters, centroid)
        for key, axis in HEAD_AXES.items()
    }
    return LeViTLayer(list(clusters), heads, substate(state, 'proj.1.bn.'))


ancestry_for.register(LeViT)(LeViTAncestry)
