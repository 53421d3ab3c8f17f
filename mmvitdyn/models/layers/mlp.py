"""Transformer feed-forward network."""
import torch
from mmcv.cnn import build_activation_layer
from torch import nn

from ...utils import check_act_cfg, check_int, check_rate


class Mlp(nn.Module):
    """Linear -> activation -> Linear, dropout ``drop`` (0) after each: ``dim`` C
    -> ``hidden_dim`` -> C, ``act_cfg`` (default ``dict(type='GELU')``)."""

    def __init__(self,
                 dim: int,
                 hidden_dim: int,
                 drop: float = 0.,
                 act_cfg: dict = dict(type='GELU')):
        super().__init__()
        check_int(hidden_dim, 'feedforward_channels', minimum=1)
        check_rate(drop, 'drop_rate')
        self.fc1 = nn.Linear(dim, hidden_dim)
        self.act = build_activation_layer(check_act_cfg(act_cfg))
        self.fc2 = nn.Linear(hidden_dim, dim)
        self.drop = nn.Dropout(drop)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., C) -> (..., C)."""
        return self.drop(self.fc2(self.drop(self.act(self.fc1(x)))))
