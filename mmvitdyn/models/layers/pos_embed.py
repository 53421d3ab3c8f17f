"""Position-embedding helpers (pure functions)."""
from typing import Tuple

import torch
import torch.nn.functional as F


def resize_pos_embed(pos_embed: torch.Tensor,
                     src_grid: Tuple[int, int],
                     dst_grid: Tuple[int, int],
                     num_prefix_tokens: int = 1,
                     mode: str = 'bicubic',
                     antialias: bool = False) -> torch.Tensor:
    """pos_embed (1, P + h_src * w_src, C) learned for ``src_grid`` -> (1, P +
    h_dst * w_dst, C) for ``dst_grid``, the P = ``num_prefix_tokens`` kept, by
    ``F.interpolate`` with ``mode`` and ``antialias`` (default False)."""
    src_grid, dst_grid = tuple(src_grid), tuple(dst_grid)
    if src_grid == dst_grid:
        return pos_embed
    expected = num_prefix_tokens + src_grid[0] * src_grid[1]
    if pos_embed.shape[1] != expected:
        raise ValueError(f'pos_embed has {pos_embed.shape[1]} tokens, but grid {src_grid} '
                         f'with {num_prefix_tokens} extra tokens needs {expected}')
    extra, grid = pos_embed[:, :num_prefix_tokens], pos_embed[:, num_prefix_tokens:]
    grid = grid.reshape(1, *src_grid, -1).permute(0, 3, 1, 2)
    grid = F.interpolate(
        grid.float(), size=dst_grid, mode=mode, align_corners=False, antialias=antialias)
    grid = grid.to(pos_embed.dtype).flatten(2).transpose(1, 2)
    return torch.cat([extra, grid], dim=1)
