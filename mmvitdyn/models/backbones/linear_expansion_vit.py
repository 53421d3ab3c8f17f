"""TLEG's Aux-Net: a ViT whose layers are a linear expansion of two blocks.

Layer l (0-based) of an L-layer Aux-Net computes with::

    theta_l = theta_A + c_l * theta_B,   c_l = l / L

for every tensor of a block (norms, Q/K/V and their biases, W^O, FFN), the
rule of TLEG's public code (docs/backbones.md). After training, theta_A and
theta_B are the TLEG learngene (:class:`mmvitdyn.learngene.TLEGLearngene`).
"""
import copy
from typing import Dict, List

import torch
from mmengine.registry import MODELS
from torch import nn

from ...checkpoint import loads_checkpoint
from ..layers import release
from .vit import ViT

Tensors = Dict[str, torch.Tensor]


def expansion_coefficients(num_layers: int) -> List[float]:
    """c_l of each of ``num_layers`` layers: l / L (0-based l), as TLEG's public code."""
    if num_layers < 1:
        raise ValueError(f'num_layers={num_layers} must be >= 1')
    return [layer / num_layers for layer in range(num_layers)]


@MODELS.register_module()
class LinearExpansionViT(ViT):
    """TLEG's Aux-Net: a ViT whose layer l computes with theta_A + c_l theta_B.

    theta_A and theta_B are the parameters ``theta_a.*`` and ``theta_b.*``,
    each named as a block's (``theta_a.attn.qkv.weight`` ...). The blocks
    hold none of these tensors: layer l's expansion
    (:meth:`layer_tensors`) is supplied in every forward pass
    (:meth:`block_tensors`), so gradients reach theta_A and theta_B.

    theta_A starts as a ViT block (truncated normal 0.02, LayerNorm 1 / 0),
    theta_B likewise with zero LayerNorm weights, so every layer's norms
    start as LayerNorm's 1 / 0.

    Args: those of :class:`ViT`.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.theta_a = copy.deepcopy(self.blocks[0])
        self.theta_b = copy.deepcopy(self.blocks[0])
        self.expanded_keys = [name for name, _ in self.theta_a.named_parameters()]
        for block in self.blocks:
            release(block, self.expanded_keys)
        self.coefficients = expansion_coefficients(len(self.blocks))

    def layer_tensors(self, layer: int) -> Tensors:
        """Block state dict of ``layer``: theta_A + c_l theta_B (with gradients)."""
        c = self.coefficients[layer]
        return {
            key: self.theta_a.get_parameter(key) + c * self.theta_b.get_parameter(key)
            for key in self.expanded_keys
        }

    def block_tensors(self, index: int) -> Tensors:
        """Every tensor of block ``index``: its expansion (:meth:`layer_tensors`)."""
        return self.layer_tensors(index)

    def init_weights(self):
        """The ViT's initialisation (or ``init_cfg``'s checkpoint), then zero
        LayerNorm weights in theta_B unless a checkpoint was loaded."""
        super().init_weights()
        if not loads_checkpoint(self.init_cfg):
            with torch.no_grad():
                for module in self.theta_b.modules():
                    if isinstance(module, nn.LayerNorm):
                        module.weight.zero_()
