"""QuickGELU, the activation of OpenAI's CLIP towers."""
import torch
from mmengine.registry import MODELS
from torch import nn


@MODELS.register_module()
class QuickGELU(nn.Module):
    """``x * sigmoid(1.702 x)``, OpenAI CLIP's approximation of GELU
    (``act_cfg=dict(type='QuickGELU')``); elementwise, any shape."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(1.702 * x)
