"""The ViT ancestry family (mmvitdyn's ``ViT`` and its subclasses): MAD recorder, condense
and extract steps, and the baselines' learngenes (whole blocks; TLEG's theta_A, theta_B)."""
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import torch
from torch import nn

from ...models.backbones import LinearExpansionViT, ViT
from ...models.layers import Attention, FFNExpansion, LayerScale, SharedHeads
from ..artefacts.block import BlockLearngene, learngene_blocks
from ..artefacts.tleg import TLEGLearngene
from ..artefacts.vit import ACTIVATIONS, LAYER_SCALE_KEYS, Learngene
from ..attention_distance import attention_distance, patch_attention, patch_distances
from ..ffn_grouping import Groups, group_ffns
from ..file_format import Tensors
from ..head_clustering import HeadCluster, cluster_heads
from .base import (Ancestry, CondenseSettings, ancestry_for, check_centroid, clone_state,
                   condense_attention, condense_ffns, substate)


class AttentionDistanceRecorder:
    """Accumulates the MAD of every head of a ViT over the images it sees::

        recorder = AttentionDistanceRecorder(backbone)
        with recorder.recording():
            for images in batches:
                backbone(images)
        mad = recorder.mean()  # (num_layers, num_heads)

    Args:
        backbone (nn.Module): mmvitdyn's ViT or a subclass.
    """

    def __init__(self, backbone: nn.Module):
        self.attentions: List[Attention] = [
            m for block in getattr(backbone, 'blocks', []) for m in block.modules()
            if isinstance(m, Attention)
        ]
        if not self.attentions:
            raise ValueError(
                f'{type(backbone).__name__} has no mmvitdyn Attention modules; convert '
                'the checkpoint to mmvitdyn\'s ViT first (tools/model_converters/)')
        other = {type(a).__name__ for a in self.attentions if type(a) is not Attention}
        if other:
            raise ValueError(f'MAD is computed for global softmax attention (mmvitdyn Attention); '
                             f'{type(backbone).__name__} has {sorted(other)}')
        heads = {a.num_heads for a in self.attentions}
        if len(heads) != 1:
            raise ValueError(f'the ancestry must have the same number of heads in every layer, '
                             f'got {sorted(heads)}')
        self.backbone = backbone
        self.num_prefix_tokens = backbone.num_prefix_tokens
        self.patch_size = backbone.patch_size
        self.num_heads = heads.pop()
        self._sums = None  # (num_layers, num_heads), on the device of the forward pass
        self.num_images = 0
        self._grid = None
        self._distances: Dict[tuple, torch.Tensor] = {}

    def _distances_for(self, grid: Tuple[int, int], device) -> torch.Tensor:
        key = (tuple(grid), str(device))
        if key not in self._distances:
            self._distances[key] = patch_distances(
                grid, self.patch_size, self.num_prefix_tokens, device=device)
        return self._distances[key]

    def _grid_hook(self, module, args, output):
        self._grid = tuple(output[1])

    def _qkv_hook(self, layer: int):
        attn = self.attentions[layer]

        def hook(module, args, output):
            if output.dim() != 3:
                raise RuntimeError(
                    f'layer {layer}: MAD needs every token of every image, got q/k/v '
                    f'of shape {tuple(output.shape)} (token dispatch? record the '
                    'complete model)')
            b, t, _ = output.shape
            qkv = output.detach().reshape(b, t, 3, attn.num_heads, attn.head_dim)
            q, k = qkv[:, :, 0].transpose(1, 2), qkv[:, :, 1].transpose(1, 2)
            probs = patch_attention(attn, q, k, self.num_prefix_tokens)
            mad = attention_distance(probs, self._distances_for(self._grid, output.device))
            if self._sums is None:
                self._sums = mad.new_zeros(
                    len(self.attentions), self.num_heads, dtype=torch.float64)
            self._sums[layer] += mad.sum(0).double()
            if layer == 0:
                self.num_images += b

        return hook

    @contextmanager
    def recording(self) -> Iterator['AttentionDistanceRecorder']:
        """Within the context, forward passes of the backbone are recorded."""
        handles = [self.backbone.patch_embed.register_forward_hook(self._grid_hook)]
        handles += [
            a.qkv.register_forward_hook(self._qkv_hook(i)) for i, a in enumerate(self.attentions)
        ]
        try:
            yield self
        finally:
            for handle in handles:
                handle.remove()

    def mean(self) -> torch.Tensor:
        """(num_layers, num_heads) MAD averaged over the recorded images."""
        if self.num_images == 0:
            raise RuntimeError('no images were recorded; run the backbone inside recording()')
        return (self._sums / self.num_images).float().cpu()


class ViTAncestry(Ancestry):
    """An mmvitdyn ``ViT`` (or subclass) ancestry.

    Args:
        backbone (ViT): The ancestry.
    """

    def block_state(self, index: int) -> Tensors:
        """Block ``index``'s state dict as a plain ViT block's, the tensors the backbone supplies
        it (``ViT.block_tensors``, detached) in place of their owners'."""
        block = self.backbone.blocks[index]
        supplied = self.backbone.block_tensors(index)
        owners = tuple(f'{name}.' for name, module in block.named_modules()
                       if isinstance(module, (SharedHeads, FFNExpansion)))
        state = {
            key: value
            for key, value in block.state_dict().items() if not key.startswith(owners)
        }
        state.update({key: value.detach() for key, value in supplied.items()})
        return state

    def describe(self) -> dict:
        """``embed_dims``, ``num_layers``, ``num_heads``, ``head_dim``, ``feedforward_channels``,
        ``patch_size``, ``patch_resolution``, ``num_extra_tokens``, ``qkv_bias`` and the family."""
        backbone = self.backbone
        attn = backbone.blocks[0].attn
        state = self.block_state(0)
        return dict(
            embed_dims=backbone.embed_dims,
            num_layers=len(backbone.blocks),
            num_heads=attn.num_heads,
            head_dim=attn.head_dim,
            feedforward_channels=state['mlp.fc1.weight'].shape[0],
            patch_size=backbone.patch_size,
            patch_resolution=list(backbone.patch_resolution),
            num_extra_tokens=backbone.num_prefix_tokens,
            qkv_bias='attn.qkv.bias' in state,
            **self.family())

    def family(self) -> dict:
        """The ViT arguments of the ancestry's family, read from its modules: ``norm_eps``,
        ``act_cfg``, ``pre_norm``, ``layer_scale_init_value``, ``num_reg_tokens``, ``dist_token``.

        Raises:
            ValueError: A setting a descendant could not reproduce (named): norms other than
                LayerNorm or of several eps, an activation not in ``ACTIVATIONS`` or differing
                between blocks, layer scales in some blocks only.
        """
        backbone = self.backbone
        name = type(backbone).__name__
        blocks = list(backbone.blocks)
        norms = [module for block in blocks for module in (block.norm1, block.norm2)]
        norms += [m for m in (backbone.norm, backbone.norm_pre) if not isinstance(m, nn.Identity)]
        kinds = {type(m).__name__ for m in norms if not isinstance(m, nn.LayerNorm)}
        if kinds:
            raise ValueError(f"{name}'s norms include {sorted(kinds)}; a learngene records "
                             "norm_cfg=dict(type='LN', eps=...) only")
        eps = {m.eps for m in norms}
        if len(eps) != 1:
            raise ValueError(f"{name}'s LayerNorms have eps {sorted(eps)}; a learngene records "
                             'one norm_cfg eps')
        acts = {self._activation(block.mlp.act) for block in blocks}
        if len(acts) != 1 or not acts <= set(ACTIVATIONS):
            raise ValueError(f"{name}'s MLP activations are {sorted(acts)}; a learngene records "
                             f'one act_cfg of type {ACTIVATIONS}')
        scaled = {
            isinstance(block.ls1, LayerScale) and isinstance(block.ls2, LayerScale)
            for block in blocks
        }
        scale = backbone.layer_scale_init_value
        if scaled != {scale is not None}:
            raise ValueError(f'{name} has layer_scale_init_value={scale!r} but layer scales in '
                             f'{sum(isinstance(b.ls1, LayerScale) for b in blocks)} of '
                             f'{len(blocks)} blocks; a learngene records them in every block '
                             'or none')
        return dict(
            norm_eps=eps.pop(),
            act_cfg=dict(type=acts.pop()),
            pre_norm=isinstance(backbone.norm_pre, nn.LayerNorm),
            layer_scale_init_value=scale,
            num_reg_tokens=0 if backbone.reg_token is None else backbone.reg_token.shape[1],
            dist_token=backbone.dist_token is not None)

    @staticmethod
    def _activation(act: nn.Module) -> str:
        """The ``act_cfg`` type of an MLP's activation ('GELU (approximate=tanh)' for tanh GELU)."""
        if isinstance(act, nn.GELU) and act.approximate != 'none':
            return f'GELU (approximate={act.approximate})'
        return type(act).__name__

    def stem(self) -> Tuple[Tensors, Tensors]:
        """Detached copies of the stem tensors (``is_stem_param``) and the final norm's state."""
        backbone = self.backbone
        embeddings = {
            key: value.detach().clone()
            for key, value in backbone.state_dict().items() if backbone.is_stem_param(key)
        }
        return embeddings, clone_state(backbone.norm.state_dict())

    def recorder(self) -> AttentionDistanceRecorder:
        return AttentionDistanceRecorder(self.backbone)

    def condense(self, mad: torch.Tensor, num_images: int, how: CondenseSettings) -> Learngene:
        """See :meth:`Ancestry.condense`; ``mad`` is (num_layers, num_heads)."""
        clusters = cluster_heads(mad, how.method, how.eps, how.min_samples, how.k)
        groups = group_ffns([len(c) for c in clusters], mad.shape[1], how.ffn_clustering,
                            how.ffn_groups)
        rule = 'explicit' if how.ffn_groups is not None else (
            'adjacent equal counts' if how.ffn_clustering else 'disabled')
        return self.extract(mad, clusters, groups, how.centroid, how.record(rule, num_images))

    @torch.no_grad()
    def extract(self,
                mad: torch.Tensor,
                clusters: Sequence[Sequence[HeadCluster]],
                ffn_groups: Groups,
                centroid: str = 'select',
                settings: Optional[dict] = None) -> Learngene:
        """Condense the ViT given its clusters and FFN groups.

        Args:
            mad (Tensor): (num_layers, num_heads) MAD table.
            clusters: Per layer, head clusters in priority order.
            ffn_groups: Partition of the layers (see ``group_ffns``).
            centroid (str): 'select' (representative head, group's first FFN) or 'average'.
            settings (dict, optional): Recorded as is.
        """
        check_centroid(centroid)
        backbone = self.backbone
        blocks = list(backbone.blocks)
        if len(clusters) != len(blocks):
            raise ValueError(
                f'clusters are given for {len(clusters)} layers, the ancestry has {len(blocks)}')
        states = [self.block_state(index) for index in range(len(blocks))]
        layers = [
            condense_attention(
                substate(state, 'attn.'), block.attn.num_heads, substate(state, 'norm1.'),
                substate(state, 'norm2.'), layer_clusters, centroid)
            for block, state, layer_clusters in zip(blocks, states, clusters)
        ]
        groups = condense_ffns(ffn_groups, lambda i: substate(states[i], 'mlp.'), centroid)
        embeddings, final_norm = self.stem()
        learngene = Learngene(
            ancestry=self.describe(),
            settings=dict(settings or {}, centroid=centroid),
            mad=mad.detach().cpu().float().clone(),
            embeddings=embeddings,
            final_norm=final_norm,
            layers=layers,
            layer_scales=[{
                key: state[key].clone()
                for key in LAYER_SCALE_KEYS if key in state
            } for state in states],
            ffn_groups=groups)
        learngene.validate()
        return learngene

    @torch.no_grad()
    def extract_blocks(self, method: str, settings: Optional[dict] = None) -> BlockLearngene:
        """The Heuristic- or Auto-Learngene learngene (``method``): the blocks
        :func:`learngene_blocks` names, whole, and the stem and final norm."""
        layers = learngene_blocks(method, len(self.backbone.blocks))
        blocks = [clone_state(self.block_state(index)) for index in layers]
        learngene = BlockLearngene(method, self.describe(), tuple(layers), blocks, *self.stem(),
                                   dict(settings or {}))
        learngene.validate()
        return learngene

    @torch.no_grad()
    def extract_expansion(self, settings: Optional[dict] = None) -> TLEGLearngene:
        """The TLEG learngene: theta_A, theta_B, stem and final norm of a trained Aux-Net.

        Raises:
            ValueError: The backbone is not a :class:`LinearExpansionViT`.
        """
        aux = self.backbone
        if not isinstance(aux, LinearExpansionViT):
            raise ValueError(f'a TLEG learngene comes from a LinearExpansionViT (the Aux-Net), '
                             f'got {type(aux).__name__}')
        learngene = TLEGLearngene(self.describe(), clone_state(aux.theta_a.state_dict()),
                                  clone_state(aux.theta_b.state_dict()), *self.stem(),
                                  dict(settings or {}))
        learngene.validate()
        return learngene


ancestry_for.register(ViT)(ViTAncestry)
