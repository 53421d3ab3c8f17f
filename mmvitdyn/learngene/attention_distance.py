"""Step 1 of Cluster-Learngene, family-independent parts: the mean attention distance (MAD)."""
from typing import Tuple

import torch

from ..models.layers import Attention


def patch_distances(grid: Tuple[int, int],
                    patch_size: int,
                    num_prefix_tokens: int = 0,
                    device=None,
                    dtype=torch.float32) -> torch.Tensor:
    """(h * w, num_prefix_tokens + h * w) pixel distances from the patches of ``grid`` (h, w)
    of side ``patch_size`` to all tokens; the ``num_prefix_tokens`` leading columns are zero."""
    h, w = grid
    rows, cols = torch.meshgrid(torch.arange(h), torch.arange(w), indexing='ij')
    pos = torch.stack([rows.flatten(), cols.flatten()], dim=1).to(torch.float64)
    dist = torch.cdist(pos, pos) * patch_size
    dist = torch.cat([dist.new_zeros(h * w, num_prefix_tokens), dist], dim=1)
    return dist.to(device=device, dtype=dtype)


def attention_distance(attn: torch.Tensor, distances: torch.Tensor) -> torch.Tensor:
    """(B, H) MAD of ``attn`` (B, H, N, T), the softmax attention of N patch queries over T
    tokens, with ``distances`` (N, T) of :func:`patch_distances` (``ValueError`` if unfit)."""
    b, h, n, t = attn.shape
    if distances.shape != (n, t):
        raise ValueError(f'distances of shape {tuple(distances.shape)} do not fit attention of '
                         f'shape {tuple(attn.shape)} (need ({n}, {t}))')
    return (attn.reshape(b, h, n * t) @ distances.reshape(n * t)) / n


def patch_attention(attn: Attention, q: torch.Tensor, k: torch.Tensor,
                    num_prefix_tokens: int) -> torch.Tensor:
    """(B, H, T - P, T) float32 softmax attention of the patch queries over all keys from ``q``,
    ``k`` (B, H, T, D) of ``attn``, P = ``num_prefix_tokens`` leading non-patch tokens."""
    return attn.scores(q[:, :, num_prefix_tokens:].float(), k.float()).softmax(dim=-1)
