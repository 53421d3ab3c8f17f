"""The Swin Transformer ancestry family (mmpretrain's ``SwinTransformer``): its in-window MAD
recorder, condense (stage by stage) and extract steps."""
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional, Sequence

import torch
from mmpretrain.models import SwinTransformer

from ...models.layers.window_msa import window_attention_probs
from ..artefacts.swin import SwinLearngene, SwinStage, WindowLearngeneLayer
from ..attention_distance import attention_distance, patch_distances
from ..file_format import Tensors
from ..head_clustering import HeadCluster
from .base import (StagedAncestry, ancestry_for, check_centroid, clone_state, condense_attention,
                   condense_ffns, pick_heads)

# The keys of mmcv's FFN (Linear-GELU-Dropout, Linear) as FFN_KEYS name them.
SWIN_FFN = {
    'fc1.weight': 'layers.0.0.weight',
    'fc1.bias': 'layers.0.0.bias',
    'fc2.weight': 'layers.1.weight',
    'fc2.bias': 'layers.1.bias'
}


class WindowAttentionDistanceRecorder:
    """Accumulates the MAD of every head of a Swin Transformer inside its (shifted) windows, in
    pixels; the feature maps must be whole windows. Use as
    :class:`~.vit.AttentionDistanceRecorder`; :meth:`mean` gives one table per stage.

    Args:
        backbone (SwinTransformer): The ancestry.
    """

    def __init__(self, backbone: SwinTransformer):
        self.backbone = backbone
        self.stages = [[block.attn for block in stage.blocks] for stage in backbone.stages]
        patch = backbone.patch_embed.projection.stride[0]
        self.strides = [patch * 2**index for index in range(len(self.stages))]
        self._sums = [None] * len(self.stages)
        self._rows = [[0] * len(blocks) for blocks in self.stages]
        self.num_images = 0
        self._distances: Dict[tuple, torch.Tensor] = {}

    def _images_hook(self, module, args):
        self.num_images += args[0].shape[0]

    def _window_check_hook(self, stage: int, layer: int):

        def hook(module, args):
            h, w = args[1]
            if h % module.window_size or w % module.window_size:
                raise RuntimeError(
                    f'stage {stage} layer {layer}: its {h}x{w} feature map is not made of '
                    f'whole {module.window_size}x{module.window_size} windows; MAD needs '
                    'unpadded windows (use an image size that gives whole windows)')

        return hook

    def _msa_hook(self, stage: int, layer: int):

        def hook(module, args, kwargs):
            x = args[0]
            probs, _ = window_attention_probs(module, x.detach(), kwargs.get('mask'))
            side = module.window_size
            key = (side, self.strides[stage], str(x.device))
            if key not in self._distances:
                self._distances[key] = patch_distances(
                    tuple(side), self.strides[stage], device=x.device)
            mad = attention_distance(probs.float(), self._distances[key])  # (windows, H)
            if self._sums[stage] is None:
                self._sums[stage] = mad.new_zeros(
                    len(self.stages[stage]), module.num_heads, dtype=torch.float64)
            self._sums[stage][layer] += mad.sum(0).double()
            self._rows[stage][layer] += mad.shape[0]

        return hook

    @contextmanager
    def recording(self) -> Iterator['WindowAttentionDistanceRecorder']:
        """Within the context, forward passes of the backbone are recorded."""
        handles = [self.backbone.patch_embed.register_forward_pre_hook(self._images_hook)]
        for stage, blocks in enumerate(self.stages):
            for layer, attn in enumerate(blocks):
                handles.append(
                    attn.register_forward_pre_hook(self._window_check_hook(stage, layer)))
                handles.append(
                    attn.w_msa.register_forward_pre_hook(
                        self._msa_hook(stage, layer), with_kwargs=True))
        try:
            yield self
        finally:
            for handle in handles:
                handle.remove()

    def mean(self) -> List[torch.Tensor]:
        """Per stage, (depth_s, heads_s) MAD averaged over the windows of the recorded images."""
        if self.num_images == 0:
            raise RuntimeError('no images were recorded; run the backbone inside recording()')
        rows = [
            torch.tensor(r, dtype=torch.float64, device=s.device).unsqueeze(1)
            for r, s in zip(self._rows, self._sums)
        ]
        return [(s / r).float().cpu() for s, r in zip(self._sums, rows)]


class SwinAncestry(StagedAncestry):
    """An mmpretrain ``SwinTransformer`` ancestry (without absolute position embedding).

    Args:
        backbone (SwinTransformer): The ancestry.
    """
    FAMILY = 'Swin'

    def describe(self) -> dict:
        """``embed_dims``, ``depths``, ``num_heads``, ``feedforward_channels`` per stage,
        ``window_size``, ``patch_size``, ``patch_resolution``, ``qkv_bias``, ``out_indices``.

        Raises:
            ValueError: The Swin has an absolute position embedding.
        """
        backbone = self.backbone
        if backbone.use_abs_pos_embed:
            raise ValueError('a Swin ancestry with an absolute position embedding is not '
                             'supported (use_abs_pos_embed=True)')
        first = [stage.blocks[0] for stage in backbone.stages]
        return dict(
            embed_dims=backbone.embed_dims,
            depths=[len(stage.blocks) for stage in backbone.stages],
            num_heads=[block.attn.w_msa.num_heads for block in first],
            feedforward_channels=[block.ffn.layers[0][0].out_features for block in first],
            window_size=first[0].attn.window_size,
            patch_size=backbone.patch_embed.projection.stride[0],
            patch_resolution=list(backbone.patch_resolution),
            qkv_bias=first[0].attn.w_msa.qkv.bias is not None,
            out_indices=sorted(backbone.out_indices))

    def recorder(self) -> WindowAttentionDistanceRecorder:
        return WindowAttentionDistanceRecorder(self.backbone)

    def stage_depths(self) -> List[int]:
        return [len(stage.blocks) for stage in self.backbone.stages]

    @torch.no_grad()
    def extract(self,
                mad: Sequence[torch.Tensor],
                clusters: Sequence[Sequence[Sequence[HeadCluster]]],
                ffn_groups: Sequence[Sequence[Sequence[int]]],
                centroid: str = 'select',
                settings: Optional[dict] = None) -> SwinLearngene:
        """Condense the Swin given, per stage, its MAD, every block's clusters and FFN groups."""
        check_centroid(centroid)
        backbone = self.backbone
        ancestry = self.describe()
        stages = []
        for index, stage in enumerate(backbone.stages):
            blocks = list(stage.blocks)
            layers = []
            for block, block_clusters in zip(blocks, clusters[index]):
                msa = block.attn.w_msa
                table = msa.relative_position_bias_table.t()  # (H, R)
                layers.append(
                    condense_attention(
                        msa.state_dict(),
                        msa.num_heads,
                        block.norm1.state_dict(),
                        block.norm2.state_dict(),
                        block_clusters,
                        centroid,
                        WindowLearngeneLayer,
                        rel_pos_bias=pick_heads(table, block_clusters, centroid).clone()))

            def ffn_of(block: int, blocks=blocks) -> Tensors:
                ffn = blocks[block].ffn
                return {key: ffn.get_parameter(name) for key, name in SWIN_FFN.items()}

            downsample = {} if stage.downsample is None else clone_state(
                stage.downsample.state_dict())
            stages.append(
                SwinStage(mad[index].detach().cpu().float().clone(), layers,
                          condense_ffns(ffn_groups[index], ffn_of, centroid), downsample))
        final_norms = {
            f'norm{i}': clone_state(getattr(backbone, f'norm{i}').state_dict())
            for i in ancestry['out_indices']
        }
        learngene = SwinLearngene(ancestry, dict(settings or {}, centroid=centroid),
                                  clone_state(backbone.patch_embed.state_dict()), final_norms,
                                  stages)
        learngene.validate()
        return learngene


ancestry_for.register(SwinTransformer)(SwinAncestry)
