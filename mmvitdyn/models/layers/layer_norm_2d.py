"""LayerNorm over the channels of feature maps."""
import torch
import torch.nn.functional as F
from mmengine.registry import MODELS
from torch import nn


@MODELS.register_module('LN2d')
class LayerNorm2d(nn.LayerNorm):
    """LayerNorm of each position's channels in (B, C, H, W) maps (``'LN2d'``)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, C, H, W) -> (B, C, H, W)."""
        x = F.layer_norm(
            x.permute(0, 2, 3, 1), self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)
