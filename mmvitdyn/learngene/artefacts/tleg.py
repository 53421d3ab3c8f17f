"""The learngene of TLEG (Xia et al., AAAI 2024), a baseline of Cluster-Learngene: theta_A,
theta_B, stem and final norm of a trained Aux-Net; layer l starts as theta_A + l / L theta_B."""
from dataclasses import dataclass, field
from typing import ClassVar, List, Tuple

import torch

from ...models.backbones import expansion_coefficients
from ..file_format import LearngeneFile, Tensors, expect_norm, validate_settings
from .vit import (upgrade_ancestry, validate_ancestry, validate_block, validate_embeddings,
                  warn_version_1)


@dataclass
class TLEGLearngene(LearngeneFile):
    """theta_A and theta_B of a trained Aux-Net: the TLEG learngene.

    Args:
        ancestry (dict): The Aux-Net's architecture (``ViTAncestry.describe``).
        theta_a, theta_b (dict): Block state dicts (see :func:`~.vit.block_shapes`).
        embeddings (dict): The Aux-Net's stem; empty in a version-1 file.
        final_norm (dict): State dict of its final norm (empty if none).
        settings (dict): How it was made (recorded as is).
    """
    FILE_FORMAT: ClassVar[str] = 'mmvitdyn.tleg_learngene'
    FILE_VERSION: ClassVar[int] = 3
    OLDER_VERSIONS: ClassVar[Tuple[int, ...]] = (1, 2)
    WRITER: ClassVar[str] = 'extract_baseline_learngene.py'

    ancestry: dict
    theta_a: Tensors
    theta_b: Tensors
    embeddings: Tensors
    final_norm: Tensors
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
        tensors = [*self.theta_a.values(), *self.theta_b.values(), *self.embeddings.values()]
        return sum(t.numel() for t in [*tensors, *self.final_norm.values()])

    def summary(self) -> str:
        a = self.ancestry
        return (f"TLEG learngene of a {a['num_layers']}-layer Aux-Net ({a['embed_dims']} wide, "
                f"{a['num_heads']} heads of {a['head_dim']}, FFN {a['feedforward_channels']}): "
                f'theta_A and theta_B, {self.num_parameters() / 1e6:.3f}M parameters')

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first missing, mistyped or mis-shaped field."""
        a = validate_ancestry(self.ancestry)
        validate_block(self.theta_a, 'theta_a', a)
        validate_block(self.theta_b, 'theta_b', a)
        validate_embeddings(self.embeddings, a, optional=True)
        expect_norm(self.final_norm, 'final_norm', a['embed_dims'], optional=True)
        validate_settings(self.settings)

    @classmethod
    def upgrade(cls, data: dict) -> dict:
        """Versions 1 and 2 (expanded with c_l = l / (L - 1)): theta_B times L / (L - 1); version 1
        also has a DeiT's family and no embeddings or final norm."""
        if data['version'] == 1:
            data['ancestry'] = upgrade_ancestry(data.get('ancestry'))
            data['embeddings'], data['final_norm'] = {}, {}
            warn_version_1('tleg', 'embeddings and final norm')
        ancestry = data.get('ancestry')
        depth = ancestry.get('num_layers') if isinstance(ancestry, dict) else None
        if isinstance(depth, int) and depth > 1 and isinstance(data.get('theta_b'), dict):
            data['theta_b'] = {
                key: value * (depth / (depth - 1)) if isinstance(value, torch.Tensor) else value
                for key, value in data['theta_b'].items()
            }
        return data
