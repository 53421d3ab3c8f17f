"""Step 1 of Cluster-Learngene: the mean attention distance (MAD) of every head.

For layer l, head h and one image, with A the softmax attention over all
tokens, the class token (and any other leading token) dropped from rows and
columns *without* renormalising, and d_ij the distance in pixels between
patches i and j on the patch grid::

    MAD = mean_i sum_j A_ij d_ij

These are the family-independent parts; each ancestry family's recorder
(:mod:`mmvitdyn.learngene.ancestries`) hooks its attentions and feeds them.
A Swin Transformer attends inside (shifted) windows: there the sum runs over
the query's window, with d_ij from the two patches' coordinates in the
window.
"""
from typing import Tuple

import torch

from ..models.layers import Attention


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
