"""Bottleneck adapters (AdaptFormer-style) and their mixture-of-experts form."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class Adapter(nn.Module):
    """``scale * up(dropout(relu(down(x))))``, starting as the zero function.

    Args:
        dim (int): Token width C.
        bottleneck (int): Hidden width d.
        scale (float): Output multiplier s. Defaults to 0.1.
        dropout (float): Dropout on the hidden activation. Defaults to 0.1.
    """

    def __init__(self, dim: int, bottleneck: int, scale: float = 0.1, dropout: float = 0.1):
        super().__init__()
        self.down = nn.Linear(dim, bottleneck)
        self.up = nn.Linear(bottleneck, dim)
        self.scale = scale
        self.dropout = nn.Dropout(dropout)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.kaiming_uniform_(self.down.weight, a=math.sqrt(5))
        for p in (self.down.bias, self.up.weight, self.up.bias):
            nn.init.zeros_(p)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, N, C) -> (B, N, C)."""
        return self.up(self.dropout(F.relu(self.down(x)))) * self.scale


class MoEAdapter(nn.Module):
    """Adapter with ``num_experts`` down/up pairs mixed per image.

    A router maps the image's mean token to softmax weights ``a`` over the
    experts; the expert weights are merged first (``W = sum_i a_i W_i``), so
    the per-token cost is that of one adapter whatever the number of experts.

    Args:
        dim (int): Token width C.
        bottleneck (int): Hidden width d of every expert.
        num_experts (int): Number of experts N.
        scale (float): Output multiplier. Defaults to 0.1.
        dropout (float): Dropout on the hidden activation. Defaults to 0.1.
    """

    def __init__(self,
                 dim: int,
                 bottleneck: int,
                 num_experts: int,
                 scale: float = 0.1,
                 dropout: float = 0.1):
        super().__init__()
        self.router = nn.Linear(dim, num_experts)
        self.down_weight = nn.Parameter(torch.empty(num_experts, dim, bottleneck))
        self.down_bias = nn.Parameter(torch.zeros(num_experts, bottleneck))
        self.up_weight = nn.Parameter(torch.zeros(num_experts, bottleneck, dim))
        self.up_bias = nn.Parameter(torch.zeros(num_experts, dim))
        self.scale = scale
        self.dropout = nn.Dropout(dropout)
        self.reset_parameters()

    def reset_parameters(self):
        # Kaiming-uniform as nn.Linear(C, d): bound 1 / sqrt(fan_in = C).
        bound = 1 / math.sqrt(self.down_weight.shape[1])
        nn.init.uniform_(self.down_weight, -bound, bound)
        nn.init.normal_(self.router.weight, std=0.02)
        for p in (self.router.bias, self.down_bias, self.up_weight, self.up_bias):
            nn.init.zeros_(p)

    def routing_weights(self, x: torch.Tensor) -> torch.Tensor:
        """(B, N, C) -> expert weights (B, num_experts), rows sum to 1."""
        return self.router(x.mean(dim=1)).softmax(dim=-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, N, C) -> (B, N, C)."""
        a = self.routing_weights(x)
        down_w = torch.einsum('be,ecd->bcd', a, self.down_weight)
        up_w = torch.einsum('be,edc->bdc', a, self.up_weight)
        hidden = torch.baddbmm((a @ self.down_bias).unsqueeze(1), x, down_w)
        hidden = self.dropout(F.relu(hidden))
        return torch.baddbmm((a @ self.up_bias).unsqueeze(1), hidden, up_w) * self.scale
