"""Classification head over a clip's tokens: attentive pooling, then a linear classifier."""
from typing import List, Optional, Tuple, Union

import torch
from mmaction.models.heads import BaseHead
from mmengine.registry import MODELS
from torch import nn

from ...utils import check_int, check_rate
from .attentive_pooling import AttentivePooling


@MODELS.register_module()
class AttentivePoolingHead(BaseHead):
    """mmaction2 head: :class:`AttentivePooling` of all frames' tokens, ``fc_cls``.

    Args:
        num_classes (int): Number of classes.
        in_channels (int): Token width C.
        num_heads, qkv_bias, norm_cfg: Of the pooling (12, True, LN eps 1e-6).
        drop_rate (float): Dropout on the tokens and the pooling output. Defaults to 0.
        attn_drop_rate (float): Dropout on the pooling's weights. Defaults to 0.
        loss_cls (dict): Defaults to ``dict(type='CrossEntropyLoss')``.
        label_smooth_eps (float): Label smoothing. Defaults to 0.
        topk (int | tuple[int]): Training top-k accuracies. Defaults to (1, 5).
        average_clips (str, optional): 'score' (mean logits, default), 'prob' or None.
        init_cfg (dict | list, optional): Defaults to trunc-normal linears.
    """

    def __init__(self,
                 num_classes: int,
                 in_channels: int,
                 num_heads: int = 12,
                 qkv_bias: bool = True,
                 drop_rate: float = 0.,
                 attn_drop_rate: float = 0.,
                 norm_cfg: dict = dict(type='LN', eps=1e-6),
                 loss_cls: dict = dict(type='CrossEntropyLoss'),
                 label_smooth_eps: float = 0.,
                 topk: Union[int, Tuple[int, ...]] = (1, 5),
                 average_clips: Optional[str] = 'score',
                 init_cfg: Optional[Union[dict, List[dict]]] = [
                     dict(
                         type='TruncNormal',
                         layer='Linear',
                         std=.02,
                         bias=0.,
                         override=dict(type='TruncNormal', name='fc_cls', std=.01, bias=0.)),
                     dict(type='Constant', layer='LayerNorm', val=1., bias=0.)
                 ]):
        super().__init__(
            check_int(num_classes, 'num_classes', minimum=1),
            in_channels,
            loss_cls=loss_cls,
            label_smooth_eps=label_smooth_eps,
            topk=topk,
            average_clips=average_clips,
            init_cfg=init_cfg)
        self.drop = nn.Dropout(check_rate(drop_rate, 'drop_rate'))
        self.pool = AttentivePooling(in_channels, num_heads, qkv_bias, attn_drop_rate, drop_rate,
                                     norm_cfg)
        self.fc_cls = nn.Linear(in_channels, num_classes)

    def pre_logits(self, x: torch.Tensor) -> torch.Tensor:
        """Tokens (B, M, C) -> pooled clip features (B, C)."""
        return self.pool(self.drop(x))

    def forward(self, x: torch.Tensor, **kwargs) -> torch.Tensor:
        """Tokens (B, M, C) -> class scores (B, num_classes); ``kwargs``, what
        mmaction2's recognisers pass their heads, are not used."""
        return self.fc_cls(self.pre_logits(x))
