"""Step 1 of Cluster-Learngene: the mean attention distance (MAD) of every head.

For layer l, head h and one image, with A the softmax attention over all
tokens, the class token (and any other leading token) dropped from rows and
columns *without* renormalising, and d_ij the distance in pixels between
patches i and j on the patch grid::

    MAD = mean_i sum_j A_ij d_ij

The ancestry's forward pass runs once per batch; a hook on each attention's
fused q/k/v projection turns its output into the heads' attention
probabilities and their MAD with one batched product per layer, against a
distance matrix computed once per grid.

A Swin Transformer attends inside (shifted) windows: there the sum runs over
the query's window, with d_ij from the two patches' coordinates in the
window (:class:`WindowAttentionDistanceRecorder`).
"""
from contextlib import contextmanager
from typing import Dict, Iterator, List, Tuple, Union

import torch
from mmpretrain.models import SwinTransformer
from torch import nn

from ..models.layers import Attention
from ..models.layers.window_msa import window_attention_probs


def patch_distances(grid: Tuple[int, int],
                    patch_size: int,
                    num_prefix_tokens: int = 0,
                    device=None,
                    dtype=torch.float32) -> torch.Tensor:
    """Pixel distances between the patches of a ``grid`` and all tokens.

    Patch i sits at (i // w, i % w); d_ij = patch_size * ||p_i - p_j||_2.

    Args:
        grid (tuple[int, int]): Patch grid (h, w).
        patch_size (int): Patch side in pixels.
        num_prefix_tokens (int): Leading non-patch tokens; their columns are
            zero, so they drop out of the sum. Defaults to 0.

    Returns:
        Tensor: (h * w, num_prefix_tokens + h * w).
    """
    h, w = grid
    rows, cols = torch.meshgrid(torch.arange(h), torch.arange(w), indexing='ij')
    pos = torch.stack([rows.flatten(), cols.flatten()], dim=1).to(torch.float64)
    dist = torch.cdist(pos, pos) * patch_size
    dist = torch.cat([dist.new_zeros(h * w, num_prefix_tokens), dist], dim=1)
    return dist.to(device=device, dtype=dtype)


def attention_distance(attn: torch.Tensor, distances: torch.Tensor) -> torch.Tensor:
    """MAD per image and head from attention probabilities of the patch queries.

    Args:
        attn (Tensor): (B, H, N, T) softmax attention of the N patch queries
            over all T tokens (rows sum to one over T).
        distances (Tensor): (N, T) from :func:`patch_distances`.

    Returns:
        Tensor: (B, H), the mean over queries of sum_j A_ij d_ij.
    """
    b, h, n, t = attn.shape
    if distances.shape != (n, t):
        raise ValueError(f'distances of shape {tuple(distances.shape)} do not fit attention of '
                         f'shape {tuple(attn.shape)} (need ({n}, {t}))')
    return (attn.reshape(b, h, n * t) @ distances.reshape(n * t)) / n


def patch_attention(attn: Attention, q: torch.Tensor, k: torch.Tensor,
                    num_prefix_tokens: int) -> torch.Tensor:
    """Softmax attention of the patch queries over all keys, in float32.

    Args:
        attn (Attention): The attention the queries and keys come from.
        q, k (Tensor): (B, H, T, D) queries and keys of all tokens.
        num_prefix_tokens (int): Leading non-patch tokens.

    Returns:
        Tensor: (B, H, T - num_prefix_tokens, T).
    """
    return attn.scores(q[:, :, num_prefix_tokens:].float(), k.float()).softmax(dim=-1)


class AttentionDistanceRecorder:
    """Accumulates the MAD of every head of a ViT over the images it sees.

    Use as a context around forward passes of the backbone::

        recorder = AttentionDistanceRecorder(backbone)
        with recorder.recording():
            for images in batches:
                backbone(images)
        mad = recorder.mean()  # (num_layers, num_heads)

    Works on any backbone with a ``patch_embed`` (returning tokens and grid),
    ``patch_size``, ``num_prefix_tokens`` and :class:`Attention` modules (one
    per layer, in order): mmvitdyn's ViT and its subclasses.

    Args:
        backbone (nn.Module): The ancestry backbone.
    """

    def __init__(self, backbone: nn.Module):
        self.attentions: List[Attention] = [
            m for m in backbone.modules() if isinstance(m, Attention)
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


class WindowAttentionDistanceRecorder:
    """Accumulates the MAD of every head of a Swin Transformer (mmpretrain's
    ``SwinTransformer``) over the images it sees, inside its windows.

    A query patch attends to the patches of its (shifted) window; d_ij is the
    distance of the two patches' coordinates in the window times the stage's
    patch stride in pixels (patch size x 2^stage). In a shifted window,
    patches from different parts of the image are masked out of each other's
    attention (their weight is ~0), so their in-window distance does not
    count. MAD = mean over every query patch of every window of
    sum_j A_ij d_ij. The feature maps must be whole windows (as Swin's
    classification grids are: 56, 28, 14, 7 at 224 with windows of 7).

    Use as :class:`AttentionDistanceRecorder`; :meth:`mean` gives one
    (depth_s, heads_s) table per stage.

    Args:
        backbone (SwinTransformer): The ancestry.
    """

    def __init__(self, backbone: nn.Module):
        if not isinstance(backbone, SwinTransformer):
            raise ValueError(f'{type(backbone).__name__} is not an mmpretrain SwinTransformer')
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
        """Per stage, (depth_s, heads_s) MAD averaged over every window of
        the recorded images."""
        if self.num_images == 0:
            raise RuntimeError('no images were recorded; run the backbone inside recording()')
        rows = [
            torch.tensor(r, dtype=torch.float64, device=s.device).unsqueeze(1)
            for r, s in zip(self._rows, self._sums)
        ]
        return [(s / r).float().cpu() for s, r in zip(self._sums, rows)]


Recorder = Union[AttentionDistanceRecorder, WindowAttentionDistanceRecorder]


@torch.no_grad()
def record_attention_distance(backbone: nn.Module, batches) -> Recorder:
    """Run ``backbone`` (in eval mode) over ``batches`` and record every head's MAD.

    Args:
        backbone (nn.Module): The ancestry: mmvitdyn's ViT, or mmpretrain's
            SwinTransformer (MAD inside its windows).
        batches (Iterable[Tensor]): Preprocessed images (B, 3, H, W), i.e.
            already normalised exactly as the model was trained.
    """
    backbone.eval()
    recorder = WindowAttentionDistanceRecorder(backbone) if isinstance(
        backbone, SwinTransformer) else AttentionDistanceRecorder(backbone)
    with recorder.recording():
        for images in batches:
            backbone(images)
    return recorder


def mean_attention_distance(backbone: nn.Module,
                            batches) -> Union[torch.Tensor, List[torch.Tensor]]:
    """MAD (num_layers, num_heads) of ``backbone`` averaged over ``batches``
    (one table per stage for a Swin; see :func:`record_attention_distance`)."""
    return record_attention_distance(backbone, batches).mean()
