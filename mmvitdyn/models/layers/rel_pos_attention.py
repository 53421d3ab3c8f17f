"""Attention over a token grid, global or windowed, with relative position bias (ViTDet)."""
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from mmengine.logging import MMLogger
from torch import nn

from ...checkpoint.vit_names import REL_POS_TABLES
from .attention import Attention
from .window_ops import (decomposed_rel_pos_bias, resize_rel_pos, window_partition,
                         window_token_mask, window_unpartition)

# How windowed attention treats the padding of a grid that is not a multiple of
# the window: 'zero' as ViTDet and SAM (zero tokens after norm1, attended to),
# 'masked' (padded keys masked out).
WINDOW_PADDINGS = ('zero', 'masked')


class RelPosAttention(Attention):
    """ViTDet's attention over an (h, w) token grid, global or windowed, with
    decomposed relative position bias (docs/design_notes.md).

    Args:
        dim, num_heads, head_dim, qkv_bias, attn_drop, proj_drop: As
            :class:`Attention`.
        window_size (int): Window side in tokens; 0 for global attention.
            Defaults to 0.
        rel_pos_size (int, optional): Grid side the relative-position tables
            are made for (the window side for windowed attention, the expected
            input grid for global attention); other sides interpolate them.
            None: no relative position bias. Defaults to None.
        window_padding (str): Padded tokens are zero vectors attended to
            ('zero', ViTDet, SAM) or masked keys ('masked'). Defaults to 'zero'.
    """

    def __init__(self,
                 dim: int,
                 num_heads: int,
                 head_dim: Optional[int] = None,
                 qkv_bias: bool = True,
                 attn_drop: float = 0.,
                 proj_drop: float = 0.,
                 window_size: int = 0,
                 rel_pos_size: Optional[int] = None,
                 window_padding: str = 'zero'):
        super().__init__(dim, num_heads, head_dim, qkv_bias, attn_drop, proj_drop)
        if window_size < 0:
            raise ValueError(f'window_size must be >= 0 (0: global attention), got {window_size}')
        if window_padding not in WINDOW_PADDINGS:
            raise ValueError(
                f'window_padding={window_padding!r} is not one of {list(WINDOW_PADDINGS)}')
        if rel_pos_size is not None and rel_pos_size < 1:
            raise ValueError(
                f'rel_pos_size must be a positive grid side or None, got {rel_pos_size}')
        self.window_size = window_size
        self.window_padding = window_padding
        if rel_pos_size is None:
            self.rel_pos_h = self.rel_pos_w = None
        else:
            # Zero tables: the block starts as plain attention (ViTDet's default).
            self.rel_pos_h = nn.Parameter(torch.zeros(2 * rel_pos_size - 1, self.head_dim))
            self.rel_pos_w = nn.Parameter(torch.zeros(2 * rel_pos_size - 1, self.head_dim))
            self._register_load_state_dict_pre_hook(self._resize_rel_pos_on_load)

    def _resize_rel_pos_on_load(self, state_dict, prefix, *args, **kwargs):
        """Load-state-dict pre-hook: interpolate tables made for another grid side."""
        for name in REL_POS_TABLES:
            key, table = prefix + name, getattr(self, name)
            if key in state_dict and state_dict[key].shape[0] != table.shape[0] \
                    and state_dict[key].shape[1:] == table.shape[1:]:
                MMLogger.get_current_instance().info(
                    f'Resize {key} from {state_dict[key].shape[0]} to {table.shape[0]} offsets')
                state_dict[key] = resize_rel_pos(state_dict[key], table.shape[0])

    def scores_bias(self, q: torch.Tensor, grid: Tuple[int, int],
                    key_valid: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
        """``attn_mask`` from queries (B', H, h * w, D) over ``grid`` (h, w) and
        ``key_valid`` (B', h * w) bool or None: bias and padded keys."""
        bias = None
        if self.rel_pos_h is not None:
            bias = decomposed_rel_pos_bias(q, grid, self.rel_pos_h, self.rel_pos_w)
        if key_valid is None:
            return bias
        key_valid = key_valid[:, None, None, :]
        return key_valid if bias is None else bias.masked_fill_(~key_valid, float('-inf'))

    def forward(self, x: torch.Tensor, grid: Tuple[int, int]) -> torch.Tensor:
        """Tokens (B, h * w, C), row-major over ``grid`` = (h, w) -> (B, h * w, C)."""
        b, n, _ = x.shape
        if n != grid[0] * grid[1]:
            raise ValueError(f'{n} tokens do not fill the grid {tuple(grid)}')
        qkv = self.qkv(x)
        attn_grid, key_valid = tuple(grid), None
        if self.window_size:
            window = self.window_size
            qkv, padded_grid = window_partition(qkv.view(b, *grid, -1), window)
            qkv = qkv.flatten(1, 2)
            attn_grid = (window, window)
            if padded_grid != tuple(grid):
                valid = window_token_mask(grid, window, x.device).repeat(b, 1)
                if self.window_padding == 'masked':
                    key_valid = valid
                elif self.qkv.bias is not None:  # zero tokens' q, k, v: the bias
                    qkv = torch.where(valid[..., None], qkv, self.qkv.bias.to(qkv.dtype))
        q, k, v = qkv.unflatten(-1, (3, self.num_heads, self.head_dim)).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(
            q,
            k,
            v,
            attn_mask=self.scores_bias(q, attn_grid, key_valid),
            dropout_p=self.attn_drop if self.training else 0.)
        out = out.transpose(1, 2)
        if torch.compiler.is_exporting():  # a copy for torch.export (docs/design_notes.md)
            out = out.clone(memory_format=torch.contiguous_format)
        out = out.flatten(2)
        if self.window_size:
            out = window_unpartition(
                out.view(-1, window, window, out.shape[-1]), window, padded_grid,
                grid).reshape(b, n, -1)
        return self.proj_drop(self.proj(out))
