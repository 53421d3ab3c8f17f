"""TLEG, a baseline of Cluster-Learngene: Transformer as Linear Expansion
of learnGene (Xia et al., AAAI 2024).

The learngene is two block-shaped sets of tensors, theta_A and theta_B. Layer
l (0-based) of an L-layer model is their linear expansion::

    theta_l = theta_A + c_l * theta_B,   c_l = l / (L - 1)   (c_0 = 0 when L = 1)

i.e. TLEG's (l - 1) / (L - 1) for 1-based l: the coefficient grows linearly
from 0 at the first layer to 1 at the last, whatever the depth. Every
tensor of a block is expanded (norms, Q/K/V and their biases, W^O, FFN).

theta_A and theta_B are learned by training an auxiliary model (TLEG's
Aux-Net, :class:`LinearExpansionViT`) whose layers are expanded this way;
:meth:`TLEGLearngene.extract` takes them from it. A descendant of any depth
then starts from the expansion for its own depth and trains its layers as
independent parameters. As for the other baselines, only the blocks are
inherited (see :mod:`mmvitdyn.learngene.block_learngene`).
"""
import copy
from dataclasses import dataclass, field
from typing import ClassVar, List, Optional

import torch
from mmengine.registry import MODELS
from torch import nn

from ..models.backbones import ViT
from ..models.utils import loads_checkpoint
from .fields import (LearngeneFile, Tensors, ancestry_of, check_format, clone_state, require,
                     validate_ancestry, validate_block, validate_settings)

FORMAT = 'mmvitdyn.tleg_learngene'
VERSION = 1


def expansion_coefficients(num_layers: int) -> List[float]:
    """c_l of each of ``num_layers`` layers: l / (L - 1), 0 for one layer."""
    if num_layers < 1:
        raise ValueError(f'num_layers={num_layers} must be >= 1')
    return [layer / max(num_layers - 1, 1) for layer in range(num_layers)]


@MODELS.register_module()
class LinearExpansionViT(ViT):
    """TLEG's Aux-Net: a ViT whose layer l computes with theta_A + c_l theta_B.

    theta_A and theta_B are the parameters ``theta_a.*`` and ``theta_b.*``,
    each named as a block's (``theta_a.attn.qkv.weight`` ...); the blocks
    hold no parameters and compute with the expanded tensors, recomputed
    in every forward pass so that gradients reach theta_A and theta_B.
    Outside a forward pass each block's tensors hold the current expansion
    (detached), so the model can be inspected like a ViT.

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
            for key in self.expanded_keys:
                owner, _, leaf = key.rpartition('.')
                delattr(block.get_submodule(owner), leaf)
        self.coefficients = expansion_coefficients(len(self.blocks))
        self._expand(detach=True)
        self.register_load_state_dict_post_hook(lambda module, keys: module._expand(True))

    def layer_tensors(self, layer: int) -> Tensors:
        """Block state dict of ``layer``: theta_A + c_l theta_B (with gradients)."""
        c = self.coefficients[layer]
        return {
            key: self.theta_a.get_parameter(key) + c * self.theta_b.get_parameter(key)
            for key in self.expanded_keys
        }

    def _expand(self, detach: bool = False) -> None:
        for index, block in enumerate(self.blocks):
            for key, value in self.layer_tensors(index).items():
                owner, _, leaf = key.rpartition('.')
                setattr(block.get_submodule(owner), leaf, value.detach() if detach else value)

    def init_weights(self):
        """The ViT's initialisation (or ``init_cfg``'s checkpoint), then zero
        LayerNorm weights in theta_B unless a checkpoint was loaded."""
        super().init_weights()
        if not loads_checkpoint(self.init_cfg):
            with torch.no_grad():
                for module in self.theta_b.modules():
                    if isinstance(module, nn.LayerNorm):
                        module.weight.zero_()
        self._expand(detach=True)

    def forward(self, x: torch.Tensor):
        """Images (B, 3, H, W) -> the ViT's outputs, every layer expanded."""
        self._expand()
        try:
            return super().forward(x)
        finally:
            self._expand(detach=True)


@dataclass
class TLEGLearngene(LearngeneFile):
    """theta_A and theta_B of a trained Aux-Net: the TLEG learngene.

    Args:
        ancestry (dict): The Aux-Net's architecture (see ``ancestry_of``).
        theta_a, theta_b (dict): Block state dicts (``norm1.weight``,
            ``attn.qkv.weight`` (3HD, C), ``mlp.fc1.weight`` (F, C) ...).
        settings (dict): How it was made (recorded as is).
    """
    FILE_FORMAT: ClassVar[str] = FORMAT
    FILE_VERSION: ClassVar[int] = VERSION
    WRITER: ClassVar[str] = 'extract_baseline_learngene.py'

    ancestry: dict
    theta_a: Tensors
    theta_b: Tensors
    settings: dict = field(default_factory=dict)
    method = 'tleg'

    @classmethod
    @torch.no_grad()
    def extract(cls, aux: LinearExpansionViT, settings: Optional[dict] = None) -> 'TLEGLearngene':
        """Take theta_A and theta_B of a (trained) :class:`LinearExpansionViT`."""
        if not isinstance(aux, LinearExpansionViT):
            raise ValueError(f'a TLEG learngene comes from a LinearExpansionViT (the Aux-Net), '
                             f'got {type(aux).__name__}')
        learngene = cls(
            ancestry_of(aux), clone_state(aux.theta_a.state_dict()),
            clone_state(aux.theta_b.state_dict()), dict(settings or {}))
        learngene.validate()
        return learngene

    def sources(self, num_layers: int) -> List[int]:
        """Every descendant layer comes from the learngene (its position l)."""
        return list(range(num_layers))

    def layer_states(self, num_layers: int) -> List[Tensors]:
        """Block state dict of each of ``num_layers`` descendant layers."""
        return [{
            key: self.theta_a[key] + c * self.theta_b[key]
            for key in self.theta_a
        } for c in expansion_coefficients(num_layers)]

    def num_parameters(self) -> int:
        return sum(t.numel() for t in [*self.theta_a.values(), *self.theta_b.values()])

    def summary(self) -> str:
        a = self.ancestry
        return (f"TLEG learngene of a {a['num_layers']}-layer Aux-Net ({a['embed_dims']} wide, "
                f"{a['num_heads']} heads of {a['head_dim']}, FFN {a['feedforward_channels']}): "
                f'theta_A and theta_B, {self.num_parameters() / 1e6:.3f}M parameters')

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first missing, mistyped or
        mis-shaped field."""
        a = validate_ancestry(self.ancestry)
        validate_block(self.theta_a, 'theta_a', a)
        validate_block(self.theta_b, 'theta_b', a)
        validate_settings(self.settings)

    def to_dict(self) -> dict:
        return dict(
            format=FORMAT,
            version=VERSION,
            ancestry=dict(self.ancestry),
            theta_a=dict(self.theta_a),
            theta_b=dict(self.theta_b),
            settings=dict(self.settings))

    @classmethod
    def from_dict(cls, data: dict, source: str = 'learngene data') -> 'TLEGLearngene':
        """Read :meth:`to_dict`'s layout; ``ValueError`` names ``source`` and the field."""
        check_format(data, FORMAT, VERSION, source)
        try:
            learngene = cls(*(require(data, key, '')
                              for key in ('ancestry', 'theta_a', 'theta_b', 'settings')))
            learngene.validate()
        except ValueError as err:
            raise ValueError(f'{source}: {err}') from err
        return learngene
