"""LayerScale: a learned per-channel scale on a residual branch (CaiT, DINOv2)."""
import torch
from torch import nn


class LayerScale(nn.Module):
    """``x * gamma`` with ``gamma`` (C,) initialised to ``init_value``.

    The parameter is named ``gamma`` as in timm and DINOv2 (``blocks.{i}.ls1.gamma``).

    Args:
        dim (int): Channels C.
        init_value (float): Initial value of every entry of ``gamma``.
    """

    def __init__(self, dim: int, init_value: float):
        super().__init__()
        self.gamma = nn.Parameter(torch.full((dim, ), float(init_value)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., C) -> (..., C)."""
        return x * self.gamma
