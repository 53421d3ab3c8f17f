"""Transformer feed-forward network."""
import torch
from torch import nn


class Mlp(nn.Module):
    """Linear -> GELU -> Linear, with dropout after each.

    Args:
        dim (int): Input and output width C.
        hidden_dim (int): Hidden width.
        drop (float): Dropout probability. Defaults to 0.
    """

    def __init__(self, dim: int, hidden_dim: int, drop: float = 0.):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden_dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_dim, dim)
        self.drop = nn.Dropout(drop)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., C) -> (..., C)."""
        return self.drop(self.fc2(self.drop(self.act(self.fc1(x)))))
