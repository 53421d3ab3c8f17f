"""Windows and decomposed relative positions of ViTDet-style attention on a
(B, h, w, C) token grid (pure functions; formulas in docs/design_notes.md)."""
from typing import Tuple

import torch
import torch.nn.functional as F


def window_partition(x: torch.Tensor, window: int) -> Tuple[torch.Tensor, Tuple[int, int]]:
    """x (B, h, w, C), zero-padded at the bottom and right to a multiple of
    ``window`` -> windows (B * n_windows, window, window, C), image by image and
    row-major, and the padded grid (h_pad, w_pad)."""
    b, h, w, c = x.shape
    pad_h, pad_w = -h % window, -w % window
    if pad_h or pad_w:
        x = F.pad(x, (0, 0, 0, pad_w, 0, pad_h))
    h_pad, w_pad = h + pad_h, w + pad_w
    x = x.view(b, h_pad // window, window, w_pad // window, window, c)
    return x.transpose(2, 3).reshape(-1, window, window, c), (h_pad, w_pad)


def window_unpartition(windows: torch.Tensor, window: int, padded_grid: Tuple[int, int],
                       grid: Tuple[int, int]) -> torch.Tensor:
    """Inverse of :func:`window_partition`: windows (B * n_windows, window,
    window, C), its ``padded_grid`` and the original (h, w) -> (B, h, w, C)."""
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
    """(size, size, D) with ``out[i, k] = table[i - k + size - 1]``; ``table``
    (L, D), one row per offset, is interpolated when L != 2 * size - 1."""
    table = resize_rel_pos(table, 2 * size - 1)
    positions = torch.arange(size, device=table.device)
    return table[positions[:, None] - positions[None, :] + size - 1]


def decomposed_rel_pos_bias(q: torch.Tensor, grid: Tuple[int, int], rel_pos_h: torch.Tensor,
                            rel_pos_w: torch.Tensor) -> torch.Tensor:
    """Bias (B, H, h * w, h * w) to add to the scaled scores, from unscaled
    queries ``q`` (B, H, h * w, D) row-major over ``grid`` (h, w) and the
    height / width offset tables (L_h, D), (L_w, D)."""
    h, w = grid
    b, heads, n, d = q.shape
    q = q.reshape(b, heads, h, w, d)
    # Contiguous terms make the (h*w)^2 sum contiguous too: the reshape is then free.
    bias_h = torch.einsum('bnijd,ikd->bnijk', q, get_rel_pos(h, rel_pos_h).to(q.dtype)).contiguous()
    bias_w = torch.einsum('bnijd,jld->bnijl', q, get_rel_pos(w, rel_pos_w).to(q.dtype)).contiguous()
    return (bias_h[..., :, None] + bias_w[..., None, :]).view(b, heads, n, n)
