"""Image to patch tokens."""
from typing import Tuple

import torch
from torch import nn

from ...utils import check_bool, check_int


class PatchEmbed(nn.Module):
    """Non-overlapping ``patch_size`` patches of ``in_channels`` images, each
    projected to an ``embed_dims`` (C) token, with a ``bias`` (default True)."""

    def __init__(self, patch_size: int, in_channels: int, embed_dims: int, bias: bool = True):
        super().__init__()
        check_int(patch_size, 'patch_size', minimum=1)
        check_int(in_channels, 'in_channels', minimum=1)
        check_int(embed_dims, 'embed_dims', minimum=1)
        check_bool(bias, 'bias')
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, embed_dims, patch_size, stride=patch_size, bias=bias)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, Tuple[int, int]]:
        """(B, in_channels, H, W) -> tokens (B, H/p * W/p, C) and the grid (H/p, W/p)."""
        h, w = x.shape[-2:]
        if h % self.patch_size or w % self.patch_size:
            raise ValueError(
                f'input size {h}x{w} is not a multiple of patch_size={self.patch_size}; '
                'resize or pad the image (e.g. a Pad transform with size_divisor) first')
        x = self.proj(x)
        grid = (x.shape[2], x.shape[3])
        return x.flatten(2).transpose(1, 2), grid
