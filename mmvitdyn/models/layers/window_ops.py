"""Windows and decomposed relative positions of ViTDet-style attention (pure functions).

Tokens live on an (h, w) grid in channels-last layout (B, h, w, C). Windowed
attention splits the grid into non-overlapping ``window x window`` squares,
padding it at the bottom and right to a multiple of the window. The relative
position bias is decomposed into a height and a width term (MViTv2, ViTDet):
for query (i, j) and key (k, l)::

    bias[(i, j), (k, l)] = q_ij . R_h[i - k] + q_ij . R_w[j - l]

with learned tables R_h, R_w of one D-vector per offset (2 * side - 1 rows).
"""
from typing import Tuple

import torch
import torch.nn.functional as F


def window_partition(x: torch.Tensor, window: int) -> Tuple[torch.Tensor, Tuple[int, int]]:
    """Split a token grid into windows, zero-padding it to a multiple of ``window``.

    Args:
        x (Tensor): (B, h, w, C).
        window (int): Window side.

    Returns:
        tuple: windows (B * n_windows, window, window, C), ordered image by
        image and row-major within an image, and the padded grid (h_pad, w_pad).
    """
    b, h, w, c = x.shape
    pad_h, pad_w = -h % window, -w % window
    if pad_h or pad_w:
        x = F.pad(x, (0, 0, 0, pad_w, 0, pad_h))
    h_pad, w_pad = h + pad_h, w + pad_w
    x = x.view(b, h_pad // window, window, w_pad // window, window, c)
    return x.transpose(2, 3).reshape(-1, window, window, c), (h_pad, w_pad)


def window_unpartition(windows: torch.Tensor, window: int, padded_grid: Tuple[int, int],
                       grid: Tuple[int, int]) -> torch.Tensor:
    """Inverse of :func:`window_partition`: windows back to the (unpadded) grid.

    Args:
        windows (Tensor): (B * n_windows, window, window, C).
        window (int): Window side.
        padded_grid (tuple): (h_pad, w_pad) returned by :func:`window_partition`.
        grid (tuple): (h, w) of the original grid.

    Returns:
        Tensor: (B, h, w, C).
    """
    (h_pad, w_pad), (h, w) = padded_grid, grid
    rows, cols = h_pad // window, w_pad // window
    x = windows.view(-1, rows, cols, window, window, windows.shape[-1])
    x = x.transpose(2, 3).reshape(-1, h_pad, w_pad, windows.shape[-1])
    return x[:, :h, :w]


def window_token_mask(grid: Tuple[int, int], window: int, device=None) -> torch.Tensor:
    """(n_windows, window * window) bool: True on the grid's tokens, False on padding."""
    ones = torch.ones(1, *grid, 1, dtype=torch.bool, device=device)
    return window_partition(ones, window)[0].flatten(1)


def resize_rel_pos(table: torch.Tensor, length: int) -> torch.Tensor:
    """A relative-position table (L, D) linearly interpolated to ``length`` rows."""
    if table.shape[0] == length:
        return table
    resized = F.interpolate(table.T[None].float(), size=length, mode='linear', align_corners=False)
    return resized[0].T.to(table.dtype)


def get_rel_pos(size: int, table: torch.Tensor) -> torch.Tensor:
    """Embeddings of the offsets between query and key positions along one axis.

    Args:
        size (int): Positions along the axis (queries and keys alike).
        table (Tensor): (L, D), one row per offset -(size0 - 1)..(size0 - 1) of
            the side the table was made for; interpolated when L != 2 * size - 1.

    Returns:
        Tensor: (size, size, D) with ``out[i, k] = table[i - k + size - 1]``.
    """
    table = resize_rel_pos(table, 2 * size - 1)
    positions = torch.arange(size, device=table.device)
    return table[positions[:, None] - positions[None, :] + size - 1]


def decomposed_rel_pos_bias(q: torch.Tensor, grid: Tuple[int, int], rel_pos_h: torch.Tensor,
                            rel_pos_w: torch.Tensor) -> torch.Tensor:
    """Decomposed relative position bias of attention over an (h, w) grid.

    Added to the scaled scores ``q k^T / sqrt(D)`` (e.g. as a float
    ``attn_mask`` of scaled-dot-product attention); ``q`` enters unscaled.

    Args:
        q (Tensor): Queries (B, H, h * w, D), row-major over the grid.
        grid (tuple): (h, w).
        rel_pos_h (Tensor): Height offsets table (L_h, D).
        rel_pos_w (Tensor): Width offsets table (L_w, D).

    Returns:
        Tensor: (B, H, h * w, h * w).
    """
    h, w = grid
    b, heads, n, d = q.shape
    q = q.reshape(b, heads, h, w, d)
    # Contiguous terms make the (h*w)^2 sum contiguous too: the reshape is then free.
    bias_h = torch.einsum('bnijd,ikd->bnijk', q, get_rel_pos(h, rel_pos_h).to(q.dtype)).contiguous()
    bias_w = torch.einsum('bnijd,jld->bnijl', q, get_rel_pos(w, rel_pos_w).to(q.dtype)).contiguous()
    return (bias_h[..., :, None] + bias_w[..., None, :]).view(b, heads, n, n)
