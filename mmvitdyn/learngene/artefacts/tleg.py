"""The learngene of TLEG, a baseline of Cluster-Learngene (Transformer as
Linear Expansion of learnGene, Xia et al., AAAI 2024): theta_A and theta_B.

Layer l (0-based) of an L-layer descendant starts from the expansion
``theta_A + c_l theta_B`` with ``c_l = l / (L - 1)``
(:func:`~mmvitdyn.models.backbones.expansion_coefficients`); theta_A and
theta_B are taken from a trained Aux-Net
(:class:`~mmvitdyn.models.backbones.LinearExpansionViT`). Only the blocks
are inherited, as for the other baselines.
"""
from dataclasses import dataclass, field
from typing import ClassVar, List

from ...models.backbones import expansion_coefficients
from ..file_format import LearngeneFile, Tensors, validate_settings
from .vit import validate_ancestry, validate_block


@dataclass
class TLEGLearngene(LearngeneFile):
    """theta_A and theta_B of a trained Aux-Net: the TLEG learngene.

    Args:
        ancestry (dict): The Aux-Net's architecture (``ViTAncestry.describe``).
        theta_a, theta_b (dict): Block state dicts (``norm1.weight``,
            ``attn.qkv.weight`` (3HD, C), ``mlp.fc1.weight`` (F, C) ...).
        settings (dict): How it was made (recorded as is).
    """
    FILE_FORMAT: ClassVar[str] = 'mmvitdyn.tleg_learngene'
    FILE_VERSION: ClassVar[int] = 1
    WRITER: ClassVar[str] = 'extract_baseline_learngene.py'

    ancestry: dict
    theta_a: Tensors
    theta_b: Tensors
    settings: dict = field(default_factory=dict)
    method = 'tleg'

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
