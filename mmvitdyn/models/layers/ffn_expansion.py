"""The learnable expansion of a shared FFN (Cluster-Learngene, step 5b).

An FFN group of T descendant layers stores one FFN W. Layer t uses
W_t = g_t(W), where g maps every scalar w of W's weights and biases on its
own: ``g(w) = A relu(a w + b) + c`` with a, b in R^2 (the hidden layer with
ReLU) and A in R^{T x 2}, c in R^T (the linear map to T outputs). g is
initialised to the identity, ``a = (1, -1)``, ``b = 0``, ``A_t = (1, -1)``,
``c = 0``, since ``relu(w) - relu(-w) = w`` exactly, so every W_t starts
equal to W. W and g are parameters of the descendant: g runs in every
forward pass and is trained with the descendant.

Where the parameters live: the first layer's FFN of a group owns the
:class:`FFNExpansion` (``blocks.{first}.mlp.expansion.*``), so each parameter
is registered, optimised and saved once. Every layer of the group has a
plain :class:`Mlp` holding no weights: its W_t is supplied in every forward
pass (see :mod:`mmvitdyn.models.layers.supplied_tensors`).
"""
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
        """W like a ViT's linears (truncated normal, std 0.02; zero biases), g = identity."""
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
    """The FFN of layer ``position`` of ``expansion``'s group, from a block's
    MLP arguments (``mlp_layer=functools.partial(expanded_mlp, expansion,
    position)``): an :class:`Mlp` whose ``fc1`` / ``fc2`` weights and biases
    are released, to be supplied as ``expansion.weights(position)``; the
    first layer's owns the expansion (``mlp.expansion``).

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
