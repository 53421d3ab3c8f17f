"""LayerScale: a learned per-channel scale on a residual branch (CaiT, DINOv2)."""
import torch
from torch import nn


class LayerScale(nn.Module):
    """``x * gamma``, ``gamma`` (``dim``,) filled with ``init_value``."""

    def __init__(self, dim: int, init_value: float):
        super().__init__()
        self.gamma = nn.Parameter(torch.full((dim, ), float(init_value)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., C) -> (..., C)."""
        return x * self.gamma
