"""Multi-head self-attention."""
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn

from ...utils import check_bool, check_int, check_rate


class Attention(nn.Module):
    """Multi-head self-attention on fused scaled-dot-product attention, inner
    width ``num_heads * head_dim`` (a descendant's head width may differ from C / H).

    Args:
        dim (int): Token width C.
        num_heads (int): Number of heads H.
        head_dim (int, optional): Width D of one head. Defaults to C // H.
        qkv_bias (bool): Bias in the q/k/v projection. Defaults to True.
        attn_drop (float): Dropout on attention weights. Defaults to 0.
        proj_drop (float): Dropout after the output projection. Defaults to 0.
    """

    def __init__(self,
                 dim: int,
                 num_heads: int,
                 head_dim: Optional[int] = None,
                 qkv_bias: bool = True,
                 attn_drop: float = 0.,
                 proj_drop: float = 0.):
        super().__init__()
        check_int(dim, 'embed_dims', minimum=1)
        check_int(num_heads, 'num_heads', minimum=1)
        check_bool(qkv_bias, 'qkv_bias')
        check_rate(attn_drop, 'attn_drop_rate')
        check_rate(proj_drop, 'drop_rate')
        if head_dim is not None:
            check_int(head_dim, 'head_dim', minimum=1)
        else:
            if dim % num_heads:
                raise ValueError(f'embed dim {dim} is not divisible by num_heads={num_heads}; '
                                 'give head_dim explicitly')
            head_dim = dim // num_heads
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.attn_drop = attn_drop
        self.qkv = nn.Linear(dim, 3 * num_heads * head_dim, bias=qkv_bias)
        self.proj = nn.Linear(num_heads * head_dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def qkv_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, N, C) -> stacked q, k, v of shape (3, B, H, N, D)."""
        b, n, _ = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.num_heads, self.head_dim)
        return qkv.permute(2, 0, 3, 1, 4)

    def scores(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """Attention logits ``q k^T / sqrt(D)``: q (B, H, N, D), k (B, H, M, D) -> (B, H, N, M)."""
        return (q @ k.transpose(-2, -1)) * self.head_dim**-0.5

    def forward_with_qk(
        self,
        x: torch.Tensor,
        attn_mask: Optional[torch.Tensor] = None
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """:meth:`forward`, also returning its queries and keys (B, H, N, D), which
        token reductions (ToMe, EViT) read; ``attn_mask`` may be a float bias."""
        b, n, _ = x.shape
        q, k, v = self.qkv_heads(x).unbind(0)
        x = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, dropout_p=self.attn_drop if self.training else 0.)
        x = x.transpose(1, 2).reshape(b, n, self.num_heads * self.head_dim)
        return self.proj_drop(self.proj(x)), q, k

    def forward(self, x: torch.Tensor, attn_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """(B, N, C) -> (B, N, C); ``attn_mask`` broadcasts to (B, H, N, N)."""
        return self.forward_with_qk(x, attn_mask)[0]
