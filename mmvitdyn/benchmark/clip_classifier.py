"""The video model the benchmarks time, without mmaction2's recogniser."""
from typing import Dict, List

import torch
from torch import nn

from ..models.video import AttentivePooling, DyTVideoViT


class ClipClassifier(nn.Module):
    """Clips (B, C, T, H, W) -> scores (B, num_classes): :class:`DyTVideoViT`,
    :class:`AttentivePooling` of all frames' tokens, a linear head (the layout
    of ``DyTRecognizer3D`` with ``AttentivePoolingHead``, docs/video.md).

    Args:
        vit (dict): The frame ViT's config (``vit`` of :class:`DyTVideoViT`).
        num_classes (int): Classes of the head. Defaults to 400 (Kinetics-400).
    """

    def __init__(self, vit: dict, num_classes: int = 400):
        super().__init__()
        self.backbone = DyTVideoViT(vit=vit)
        width = self.backbone.vit.embed_dims
        self.pool = AttentivePooling(width, self.backbone.vit.arch_settings['num_heads'])
        self.fc = nn.Linear(width, num_classes)

    def forward(self, clips: torch.Tensor) -> torch.Tensor:
        return self.fc(self.pool(self.backbone(clips)))

    def dispatch_masks(self) -> List[Dict[str, torch.Tensor]]:
        """The backbone's masks of the last forward, (B * T, N_patches) per part."""
        return self.backbone.dispatch_masks()

    def activation_rates(self) -> Dict[str, float]:
        return self.backbone.activation_rates()
