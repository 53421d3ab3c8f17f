"""Classification head over a clip's tokens: attentive pooling, then a linear classifier."""
from typing import List, Optional, Union

import torch
from mmengine.model import BaseModule
from mmengine.registry import MODELS
from torch import nn

from ...utils import check_int, check_rate
from .attentive_pooling import AttentivePooling


@MODELS.register_module()
class AttentivePoolingHead(BaseModule):
    """Clip scores from the tokens of all its frames, as
    :class:`DyTVideoViT` returns them: dropout on the tokens,
    :class:`AttentivePooling` (a learned query cross-attends to them), a
    linear classifier ``fc_cls``.

    Args:
        num_classes (int): Number of classes.
        in_channels (int): Token width C.
        num_heads (int): Heads of the pooling's cross-attention. Defaults to 12.
        qkv_bias (bool): Biases on the pooling's query and value projections.
            Defaults to True.
        drop_rate (float): Dropout on the input tokens and after the pooling's
            output projection. Defaults to 0.
        attn_drop_rate (float): Dropout on the pooling's attention weights.
            Defaults to 0.
        norm_cfg (dict): Norm of the pooling's query, key and value inputs.
            Defaults to ``dict(type='LN', eps=1e-6)``.
        init_cfg (dict | list, optional): Defaults to trunc-normal linears
            (std 0.02, bias 0) with ``fc_cls`` at std 0.01, LayerNorms (1, 0);
            the query starts at zero.
    """

    def __init__(self,
                 num_classes: int,
                 in_channels: int,
                 num_heads: int = 12,
                 qkv_bias: bool = True,
                 drop_rate: float = 0.,
                 attn_drop_rate: float = 0.,
                 norm_cfg: dict = dict(type='LN', eps=1e-6),
                 init_cfg: Optional[Union[dict, List[dict]]] = [
                     dict(
                         type='TruncNormal',
                         layer='Linear',
                         std=.02,
                         bias=0.,
                         override=dict(type='TruncNormal', name='fc_cls', std=.01, bias=0.)),
                     dict(type='Constant', layer='LayerNorm', val=1., bias=0.)
                 ]):
        super().__init__(init_cfg=init_cfg)
        self.num_classes = check_int(num_classes, 'num_classes', minimum=1)
        self.in_channels = in_channels
        self.drop = nn.Dropout(check_rate(drop_rate, 'drop_rate'))
        self.pool = AttentivePooling(in_channels, num_heads, qkv_bias, attn_drop_rate, drop_rate,
                                     norm_cfg)
        self.fc_cls = nn.Linear(in_channels, num_classes)

    def pre_logits(self, x: torch.Tensor) -> torch.Tensor:
        """Tokens (B, M, C) -> pooled clip features (B, C)."""
        return self.pool(self.drop(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Tokens (B, M, C) -> class scores (B, num_classes)."""
        return self.fc_cls(self.pre_logits(x))
