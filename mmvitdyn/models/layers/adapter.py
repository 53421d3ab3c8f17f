"""Bottleneck adapters (AdaptFormer-style) and their mixtures of experts (DyT's MoE, AdaMix)."""
import math
from typing import Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import nn

from ...checkpoint.vit_names import LEARNABLE_SCALE

# Where an adapter may hold a LayerNorm: none, on its input ('in', before the
# down-projection) or on its scaled output ('out', after the up-projection).
ADAPTER_LAYER_NORMS = (None, 'in', 'out')


class _BottleneckAdapter(nn.Module):
    """``norm_out(scale * bottleneck(norm_in(x)))``; arguments as :class:`Adapter`
    (``'learnable'`` scale: a parameter of shape (1,) initialised to 1)."""

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


class _ExpertAdapter(_BottleneckAdapter):
    """E down- and U up-projections (U = ``num_up_experts`` or E), each expert
    initialised as :class:`Adapter`: ``down_weight`` (E, C, d), ``down_bias``
    (E, d), ``up_weight`` (U, d, C), ``up_bias`` (U, C)."""

    def __init__(self,
                 dim: int,
                 bottleneck: int,
                 num_experts: int,
                 scale: Union[float, str],
                 dropout: float,
                 layer_norm: Optional[str],
                 num_up_experts: Optional[int] = None):
        super().__init__(dim, scale, dropout, layer_norm)
        num_up = num_experts if num_up_experts is None else num_up_experts
        self.down_weight = nn.Parameter(torch.empty(num_experts, dim, bottleneck))
        self.down_bias = nn.Parameter(torch.zeros(num_experts, bottleneck))
        self.up_weight = nn.Parameter(torch.zeros(num_up, bottleneck, dim))
        self.up_bias = nn.Parameter(torch.zeros(num_up, dim))

    def reset_parameters(self):
        super().reset_parameters()
        # Kaiming-uniform as nn.Linear(C, d): bound 1 / sqrt(fan_in = C).
        bound = 1 / math.sqrt(self.down_weight.shape[1])
        nn.init.uniform_(self.down_weight, -bound, bound)
        for p in (self.down_bias, self.up_weight, self.up_bias):
            nn.init.zeros_(p)


class MoEAdapter(_ExpertAdapter):
    """DyT's MoE-adapter: ``num_experts`` (N) down/up pairs merged per image by a
    router's softmax of the mean token, ``W = sum_i a_i W_i``. Other arguments
    and defaults as :class:`Adapter`."""

    def __init__(self,
                 dim: int,
                 bottleneck: int,
                 num_experts: int,
                 scale: Union[float, str] = 0.1,
                 dropout: float = 0.1,
                 layer_norm: Optional[str] = None):
        super().__init__(dim, bottleneck, num_experts, scale, dropout, layer_norm)
        self.router = nn.Linear(dim, num_experts)
        self.reset_parameters()

    def reset_parameters(self):
        super().reset_parameters()
        nn.init.normal_(self.router.weight, std=0.02)
        nn.init.zeros_(self.router.bias)

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


class AdaMixAdapter(_ExpertAdapter):
    """AdaMix (Wang et al. 2022): ``num_experts`` (E) down-projections; training
    draws one down- and one up-projection per forward (:meth:`choose_experts`),
    evaluation uses the experts' mean (:meth:`merged_weights`). Other arguments
    and defaults as :class:`Adapter`.

    Args:
        share_up (bool): One up-projection (``up_weight`` (1, d, C)) for all E
            down-projections; False for E. Defaults to True.
    """

    def __init__(self,
                 dim: int,
                 bottleneck: int,
                 num_experts: int,
                 scale: Union[float, str] = 0.1,
                 dropout: float = 0.1,
                 layer_norm: Optional[str] = None,
                 share_up: bool = True):
        super().__init__(dim, bottleneck, num_experts, scale, dropout, layer_norm,
                         1 if share_up else num_experts)
        self.share_up = share_up
        self.reset_parameters()

    def reset_parameters(self):
        """Every expert initialised as one :class:`Adapter`, all equal."""
        super().reset_parameters()
        with torch.no_grad():
            self.down_weight[1:] = self.down_weight[0]

    def choose_experts(self) -> Tuple[int, int]:
        """Indices (down, up), each uniform from torch's global RNG, down first."""
        down = int(torch.randint(self.down_weight.shape[0], ()))
        up = int(torch.randint(self.up_weight.shape[0], ()))
        return down, up

    def merged_weights(self) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Experts' means: down weight (C, d), bias (d,), up weight (d, C), bias (C,)."""
        return tuple(
            p.mean(0) for p in (self.down_weight, self.down_bias, self.up_weight, self.up_bias))

    def bottleneck(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            down, up = self.choose_experts()
            weights = (self.down_weight[down], self.down_bias[down], self.up_weight[up],
                       self.up_bias[up])
        else:
            weights = self.merged_weights()
        down_w, down_b, up_w, up_b = weights
        hidden = self.dropout(F.relu(torch.matmul(x, down_w) + down_b))
        return torch.matmul(hidden, up_w) + up_b


# How the experts of an adapter with ``num_experts > 1`` are mixed: by DyT's
# per-image router (the MoE-adapter) or by AdaMix's random choice / average.
EXPERT_ADAPTERS = {'router': MoEAdapter, 'adamix': AdaMixAdapter}
