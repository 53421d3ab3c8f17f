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

    Args: ``dim`` (int) C; ``num_heads`` (int); ``mlp_hidden_dim`` (int);
    ``head_dim``, ``qkv_bias``, ``attn_drop`` as :class:`Attention`; ``drop``
    (float, 0) after projections; ``drop_path`` (float, 0) stochastic depth;
    ``norm_cfg`` (dict, LayerNorm eps 1e-6); ``attn_layer`` (callable, ``(dim,
    num_heads, head_dim, qkv_bias, attn_drop, proj_drop)``, :class:`Attention`);
    ``mlp_layer`` (callable, ``(dim, mlp_hidden_dim, drop, act_cfg)``,
    :class:`Mlp`); ``layer_scale_init`` (float, optional, None: no LayerScale);
    ``act_cfg`` (dict, GELU) the MLP activation.
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
