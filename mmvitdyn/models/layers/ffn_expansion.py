"""The learnable expansion of a shared FFN (Cluster-Learngene step 5b;
docs/design_notes.md)."""
from typing import Dict, Mapping

import torch
import torch.nn.functional as F
from mmengine.model.weight_init import trunc_normal_
from torch import nn

from .mlp import Mlp
from .supplied_tensors import release

FFN_PARAMS = {
    'fc1.weight': 'fc1_weight',
    'fc1.bias': 'fc1_bias',
    'fc2.weight': 'fc2_weight',
    'fc2.bias': 'fc2_bias'
}


class FFNExpansion(nn.Module):
    """One FFN W shared by ``num_layers`` layers and the map g: W_t = g_t(W).

    Args:
        dim (int): Token width C.
        hidden_dim (int): FFN hidden width.
        num_layers (int): T, the layers the FFN expands to.
    """

    def __init__(self, dim: int, hidden_dim: int, num_layers: int):
        super().__init__()
        if num_layers < 1:
            raise ValueError(f'num_layers={num_layers} must be >= 1')
        self.num_layers = num_layers
        self.fc1_weight = nn.Parameter(torch.empty(hidden_dim, dim))
        self.fc1_bias = nn.Parameter(torch.empty(hidden_dim))
        self.fc2_weight = nn.Parameter(torch.empty(dim, hidden_dim))
        self.fc2_bias = nn.Parameter(torch.empty(dim))
        self.map_hidden_weight = nn.Parameter(torch.empty(2))
        self.map_hidden_bias = nn.Parameter(torch.empty(2))
        self.map_out_weight = nn.Parameter(torch.empty(num_layers, 2))
        self.map_out_bias = nn.Parameter(torch.empty(num_layers))
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """W truncated normal (std 0.02), zero biases; g the identity."""
        trunc_normal_(self.fc1_weight, std=.02)
        trunc_normal_(self.fc2_weight, std=.02)
        self.fc1_bias.zero_()
        self.fc2_bias.zero_()
        self.reset_map()

    @torch.no_grad()
    def reset_map(self) -> None:
        """Make g the identity: every W_t equals W."""
        self.map_hidden_weight.copy_(torch.tensor([1., -1.]))
        self.map_hidden_bias.zero_()
        self.map_out_weight.copy_(torch.tensor([1., -1.]).expand(self.num_layers, 2))
        self.map_out_bias.zero_()

    @torch.no_grad()
    def load_ffn(self, weights: Mapping[str, torch.Tensor]) -> None:
        """Set W from an FFN state (``fc1.weight``, ``fc1.bias``, ``fc2.weight``, ``fc2.bias``)."""
        for key, name in FFN_PARAMS.items():
            param = getattr(self, name)
            if tuple(weights[key].shape) != tuple(param.shape):
                raise ValueError(f'FFN {key} of shape {tuple(weights[key].shape)} does not fit '
                                 f'{tuple(param.shape)}')
            param.copy_(weights[key])

    def expand(self, w: torch.Tensor, position: int) -> torch.Tensor:
        """g_t applied to every scalar of ``w``."""
        hidden = F.relu(w.unsqueeze(-1) * self.map_hidden_weight + self.map_hidden_bias)
        return hidden @ self.map_out_weight[position] + self.map_out_bias[position]

    def weights(self, position: int) -> Dict[str, torch.Tensor]:
        """The FFN of layer ``position`` (0 <= position < T), as an FFN state."""
        if not 0 <= position < self.num_layers:
            raise IndexError(f'position {position} is outside 0..{self.num_layers - 1}')
        return {key: self.expand(getattr(self, name), position) for key, name in FFN_PARAMS.items()}


def expanded_mlp(expansion: FFNExpansion,
                 position: int,
                 dim: int,
                 hidden_dim: int,
                 drop: float = 0.,
                 act_cfg: dict = dict(type='GELU')) -> Mlp:
    """An :class:`Mlp` (block MLP arguments) with released ``fc1`` / ``fc2``,
    supplied as ``expansion.weights(position)``; position 0 owns ``expansion``.

    Raises:
        ValueError: The widths are not the expansion's.
    """
    shape = tuple(expansion.fc1_weight.shape)
    if shape != (hidden_dim, dim):
        raise ValueError(f'the shared FFN is {shape[1]} -> {shape[0]} wide; the block asks for '
                         f'{dim} -> {hidden_dim}')
    if not 0 <= position < expansion.num_layers:
        raise IndexError(f'position {position} is outside 0..{expansion.num_layers - 1}')
    mlp = Mlp(dim, hidden_dim, drop, act_cfg)
    release(mlp, FFN_PARAMS)
    if position == 0:
        mlp.expansion = expansion
    return mlp
