"""Swin's window attention with a head width of its own (docs/design_notes.md)."""
from typing import Optional, Tuple

import torch
from mmpretrain.models.utils import WindowMSA
from torch import nn


def window_attention_probs(
        msa: nn.Module,
        x: torch.Tensor,
        mask: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    """Probabilities (nW * B, H, N, N) and values (nW * B, H, N, D) of a
    (``HeadWidth``)``WindowMSA`` on window tokens x (nW * B, N, C), with the
    optional (nW, N, N) shifted-window ``mask``."""
    b, n, _ = x.shape
    h = msa.num_heads
    q, k, v = msa.qkv(x).reshape(b, n, 3, h, -1).permute(2, 0, 3, 1, 4)
    attn = (q * msa.scale) @ k.transpose(-2, -1)
    bias = msa.relative_position_bias_table[msa.relative_position_index.view(-1)]
    attn = attn + bias.view(n, n, h).permute(2, 0, 1).unsqueeze(0)
    if mask is not None:
        windows = mask.shape[0]
        attn = (attn.view(b // windows, windows, h, n, n) + mask[None, :, None]).view(b, h, n, n)
    return attn.softmax(dim=-1), v


class HeadWidthWindowMSA(WindowMSA):
    """``WindowMSA`` with ``num_heads`` heads of ``head_dim`` each.

    Args:
        embed_dims (int): Token width C.
        window_size (tuple[int]): (Wh, Ww).
        num_heads (int): Heads H.
        head_dim (int): Width D of a head; q/k/v are 3HD wide.
        qkv_bias, qk_scale, attn_drop, proj_drop, init_cfg: As ``WindowMSA``.
    """

    def __init__(self,
                 embed_dims: int,
                 window_size: Tuple[int, int],
                 num_heads: int,
                 head_dim: int,
                 qkv_bias: bool = True,
                 qk_scale: Optional[float] = None,
                 attn_drop: float = 0.,
                 proj_drop: float = 0.,
                 init_cfg: Optional[dict] = None):
        super().__init__(embed_dims, window_size, num_heads, qkv_bias, qk_scale, attn_drop,
                         proj_drop, init_cfg)
        self.head_dim = head_dim
        self.scale = qk_scale or head_dim**-0.5
        self.qkv = nn.Linear(embed_dims, 3 * num_heads * head_dim, bias=qkv_bias)
        self.proj = nn.Linear(num_heads * head_dim, embed_dims)

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """(nW * B, N, C) -> (nW * B, N, C); ``mask`` as in ``WindowMSA``."""
        attn, v = window_attention_probs(self, x, mask)
        x = (self.attn_drop(attn) @ v).transpose(1, 2).reshape(x.shape[0], x.shape[1], -1)
        return self.proj_drop(self.proj(x))
