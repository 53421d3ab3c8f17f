"""Bottleneck adapters (AdaptFormer-style) and their mixture-of-experts form."""
import math
from typing import Optional, Union

import torch
import torch.nn.functional as F
from torch import nn

# Where an adapter may hold a LayerNorm: none, on its input ('in', before the
# down-projection) or on its scaled output ('out', after the up-projection).
ADAPTER_LAYER_NORMS = (None, 'in', 'out')
# ``scale`` value that makes the output multiplier a parameter (initialised to 1).
LEARNABLE_SCALE = 'learnable'


class _BottleneckAdapter(nn.Module):
    """What both adapters share: output scale, optional LayerNorm, dropout.

    ``forward`` is ``norm_out(scale * bottleneck(norm_in(x)))``, with the
    LayerNorm on the input ('in') or the output ('out') or absent; subclasses
    give :meth:`bottleneck`.

    Args:
        dim (int): Token width C.
        scale (float | str): Output multiplier s, or ``'learnable'`` for a
            parameter ``scale`` of shape (1,) initialised to 1.
        dropout (float): Dropout on the hidden activation.
        layer_norm (str, optional): None, 'in' or 'out' (see
            :data:`ADAPTER_LAYER_NORMS`); the LayerNorm (eps 1e-5) is ``norm``.
    """

    def __init__(self, dim: int, scale: Union[float, str], dropout: float,
                 layer_norm: Optional[str]):
        super().__init__()
        if scale == LEARNABLE_SCALE:
            self.scale = nn.Parameter(torch.ones(1))
        else:
            self.scale = float(scale)
        self.layer_norm = layer_norm
        self.norm = nn.LayerNorm(dim) if layer_norm is not None else None
        self.dropout = nn.Dropout(dropout)

    def reset_parameters(self):
        """LayerNorm to identity, a learnable scale to 1."""
        if self.norm is not None:
            self.norm.reset_parameters()
        if isinstance(self.scale, nn.Parameter):
            nn.init.ones_(self.scale)

    def bottleneck(self, x: torch.Tensor) -> torch.Tensor:
        """(B, N, C) -> (B, N, C), before scale and output norm."""
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, N, C) -> (B, N, C)."""
        if self.layer_norm == 'in':
            x = self.norm(x)
        out = self.bottleneck(x) * self.scale
        return self.norm(out) if self.layer_norm == 'out' else out


class Adapter(_BottleneckAdapter):
    """``scale * up(dropout(relu(down(x))))``, starting as the zero function.

    Args:
        dim (int): Token width C.
        bottleneck (int): Hidden width d.
        scale (float | str): Output multiplier s, or ``'learnable'``.
            Defaults to 0.1.
        dropout (float): Dropout on the hidden activation. Defaults to 0.1.
        layer_norm (str, optional): LayerNorm before the down-projection
            ('in'), after the scaled up-projection ('out'), or none (None).
            Defaults to None.
    """

    def __init__(self,
                 dim: int,
                 bottleneck: int,
                 scale: Union[float, str] = 0.1,
                 dropout: float = 0.1,
                 layer_norm: Optional[str] = None):
        super().__init__(dim, scale, dropout, layer_norm)
        self.down = nn.Linear(dim, bottleneck)
        self.up = nn.Linear(bottleneck, dim)
        self.reset_parameters()

    def reset_parameters(self):
        super().reset_parameters()
        nn.init.kaiming_uniform_(self.down.weight, a=math.sqrt(5))
        for p in (self.down.bias, self.up.weight, self.up.bias):
            nn.init.zeros_(p)

    def bottleneck(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(self.dropout(F.relu(self.down(x))))


class MoEAdapter(_BottleneckAdapter):
    """Adapter with ``num_experts`` down/up pairs mixed per image.

    A router maps the image's mean token to softmax weights ``a`` over the
    experts; the expert weights are merged first (``W = sum_i a_i W_i``), so
    the per-token cost is that of one adapter whatever the number of experts.
    With ``layer_norm='in'`` the router reads the normalised tokens.

    Args:
        dim (int): Token width C.
        bottleneck (int): Hidden width d of every expert.
        num_experts (int): Number of experts N.
        scale (float | str): Output multiplier, or ``'learnable'``. Defaults to 0.1.
        dropout (float): Dropout on the hidden activation. Defaults to 0.1.
        layer_norm (str, optional): None, 'in' or 'out', as in :class:`Adapter`.
            Defaults to None.
    """

    def __init__(self,
                 dim: int,
                 bottleneck: int,
                 num_experts: int,
                 scale: Union[float, str] = 0.1,
                 dropout: float = 0.1,
                 layer_norm: Optional[str] = None):
        super().__init__(dim, scale, dropout, layer_norm)
        self.router = nn.Linear(dim, num_experts)
        self.down_weight = nn.Parameter(torch.empty(num_experts, dim, bottleneck))
        self.down_bias = nn.Parameter(torch.zeros(num_experts, bottleneck))
        self.up_weight = nn.Parameter(torch.zeros(num_experts, bottleneck, dim))
        self.up_bias = nn.Parameter(torch.zeros(num_experts, dim))
        self.reset_parameters()

    def reset_parameters(self):
        super().reset_parameters()
        # Kaiming-uniform as nn.Linear(C, d): bound 1 / sqrt(fan_in = C).
        bound = 1 / math.sqrt(self.down_weight.shape[1])
        nn.init.uniform_(self.down_weight, -bound, bound)
        nn.init.normal_(self.router.weight, std=0.02)
        for p in (self.router.bias, self.down_bias, self.up_weight, self.up_bias):
            nn.init.zeros_(p)

    def routing_weights(self, x: torch.Tensor) -> torch.Tensor:
        """(B, N, C) -> expert weights (B, num_experts), rows sum to 1."""
        return self.router(x.mean(dim=1)).softmax(dim=-1)

    def bottleneck(self, x: torch.Tensor) -> torch.Tensor:
        a = self.routing_weights(x)
        down_w = torch.einsum('be,ecd->bcd', a, self.down_weight)
        up_w = torch.einsum('be,edc->bdc', a, self.up_weight)
        hidden = torch.baddbmm((a @ self.down_bias).unsqueeze(1), x, down_w)
        hidden = self.dropout(F.relu(hidden))
        return torch.baddbmm((a @ self.up_bias).unsqueeze(1), hidden, up_w)
