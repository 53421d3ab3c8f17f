"""Attentive pooling: one learned query cross-attends to a set of tokens."""
import torch
import torch.nn.functional as F
from mmcv.cnn import build_norm_layer
from torch import nn

from ...utils import check_bool, check_int, check_norm_cfg, check_rate


class AttentivePooling(nn.Module):
    """Pool tokens (B, M, C) to (B, C) by H-head cross-attention from a learned
    query token (docs/design_notes.md).

    Args:
        dim (int): Token width C, a multiple of ``num_heads``.
        num_heads (int): Heads H.
        qkv_bias (bool): Biases on the query and value projections. Defaults to True.
        attn_drop (float): Dropout on the attention weights. Defaults to 0.
        proj_drop (float): Dropout after the output projection. Defaults to 0.
        norm_cfg (dict): Norms of the query, key and value inputs. Defaults to
            ``dict(type='LN', eps=1e-6)``.
    """

    def __init__(self,
                 dim: int,
                 num_heads: int,
                 qkv_bias: bool = True,
                 attn_drop: float = 0.,
                 proj_drop: float = 0.,
                 norm_cfg: dict = dict(type='LN', eps=1e-6)):
        super().__init__()
        check_int(dim, 'in_channels', minimum=1)
        check_int(num_heads, 'num_heads', minimum=1)
        if dim % num_heads:
            raise ValueError(f'in_channels={dim} is not a multiple of num_heads={num_heads}')
        check_bool(qkv_bias, 'qkv_bias')
        check_norm_cfg(norm_cfg)
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.attn_drop = check_rate(attn_drop, 'attn_drop_rate')
        self.query = nn.Parameter(torch.zeros(1, 1, dim))
        self.norm_q = build_norm_layer(norm_cfg, dim)[1]
        self.norm_k = build_norm_layer(norm_cfg, dim)[1]
        self.norm_v = build_norm_layer(norm_cfg, dim)[1]
        self.q = nn.Linear(dim, dim, bias=qkv_bias)
        self.k = nn.Linear(dim, dim, bias=False)
        self.v = nn.Linear(dim, dim, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(check_rate(proj_drop, 'drop_rate'))

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, M, C) -> (B, H, M, D)."""
        b, m, _ = x.shape
        return x.reshape(b, m, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Tokens (B, M, C) -> pooled (B, C)."""
        b = x.shape[0]
        q = self._heads(self.q(self.norm_q(self.query))).expand(b, -1, -1, -1)
        k = self._heads(self.k(self.norm_k(x)))
        v = self._heads(self.v(self.norm_v(x)))
        out = F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.attn_drop if self.training else 0.)
        return self.proj_drop(self.proj(out.reshape(b, -1)))
