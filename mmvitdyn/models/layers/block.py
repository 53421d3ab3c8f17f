"""Pre-norm transformer block."""
from typing import Callable, Optional

import torch
from mmcv.cnn import build_norm_layer
from mmcv.cnn.bricks import DropPath
from torch import nn

from ...utils import check_norm_cfg, check_number, check_rate
from .attention import Attention
from .layer_scale import LayerScale
from .mlp import Mlp


class Block(nn.Module):
    """x = x + LS1(Attn(LN(x))); x = x + LS2(MLP(LN(x))), LS a LayerScale or identity.

    Args:
        dim (int): Token width C.
        num_heads (int): Attention heads.
        mlp_hidden_dim (int): Hidden width of the MLP.
        head_dim (int, optional): Width of one head. Defaults to C // num_heads.
        qkv_bias (bool): Bias in the q/k/v projection. Defaults to True.
        drop (float): Dropout after projections. Defaults to 0.
        attn_drop (float): Dropout on attention weights. Defaults to 0.
        drop_path (float): Stochastic depth rate. Defaults to 0.
        norm_cfg (dict): Norm layer config. Defaults to LayerNorm, eps 1e-6.
        attn_layer (callable): Builds the attention from ``(dim, num_heads,
            head_dim, qkv_bias, attn_drop, proj_drop)``; e.g. a ``partial`` of
            :class:`RelPosAttention`. Defaults to :class:`Attention`.
        mlp_layer (callable): Builds the MLP from ``(dim, mlp_hidden_dim,
            drop, act_cfg)``. Defaults to :class:`Mlp`.
        layer_scale_init (float, optional): Initial value of the LayerScale
            ``ls1`` / ``ls2`` on both residual branches (DINOv2, CaiT); None for
            none. Defaults to None.
        act_cfg (dict): Activation of the MLP. Defaults to ``dict(type='GELU')``.
    """

    def __init__(self,
                 dim: int,
                 num_heads: int,
                 mlp_hidden_dim: int,
                 head_dim: Optional[int] = None,
                 qkv_bias: bool = True,
                 drop: float = 0.,
                 attn_drop: float = 0.,
                 drop_path: float = 0.,
                 norm_cfg: dict = dict(type='LN', eps=1e-6),
                 attn_layer: Callable[..., nn.Module] = Attention,
                 mlp_layer: Callable[..., nn.Module] = Mlp,
                 layer_scale_init: Optional[float] = None,
                 act_cfg: dict = dict(type='GELU')):
        super().__init__()
        check_rate(drop_path, 'drop_path_rate')
        check_norm_cfg(norm_cfg)
        if layer_scale_init is not None:
            check_number(layer_scale_init, 'layer_scale_init_value')
        self.norm1 = build_norm_layer(norm_cfg, dim)[1]
        self.attn = attn_layer(dim, num_heads, head_dim, qkv_bias, attn_drop, drop)
        self.norm2 = build_norm_layer(norm_cfg, dim)[1]
        self.mlp = mlp_layer(dim, mlp_hidden_dim, drop, act_cfg)
        self.drop_path = DropPath(drop_path) if drop_path > 0 else nn.Identity()
        scale = nn.Identity if layer_scale_init is None else (
            lambda: LayerScale(dim, layer_scale_init))
        self.ls1, self.ls2 = scale(), scale()

    def forward(self, x: torch.Tensor, **attn_kwargs) -> torch.Tensor:
        """(B, N, C) -> (B, N, C); ``attn_kwargs`` go to the attention (e.g. its token grid)."""
        x = x + self.drop_path(self.ls1(self.attn(self.norm1(x), **attn_kwargs)))
        return x + self.drop_path(self.ls2(self.mlp(self.norm2(x))))
