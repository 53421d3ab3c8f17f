"""Resampling a (B, C, H, W) map by a power of two, as the plain-ViT pyramids do."""
import math
from typing import List, Optional, Tuple

from mmcv.cnn import build_norm_layer
from torch import nn

from ...utils import check_norm_cfg, check_number


def build_resampler(factor: float,
                    channels: int,
                    norm_cfg: Optional[dict] = None,
                    halve_channels: bool = False) -> Tuple[nn.Module, int]:
    """The module resampling (B, C, H, W) to (B, C', H * factor, W * factor), and
    C' (docs/design_notes.md).

    Raises:
        ValueError: ``factor`` is not a power of two, or ``norm_cfg`` is bad.
    """
    check_number(factor, 'scale factor', 0, low_open=True)
    if norm_cfg is not None:
        check_norm_cfg(norm_cfg)
    steps = math.log2(factor)
    if steps != int(steps):
        raise ValueError(f'scale factor {factor} is not a power of two (e.g. 4, 2, 1, 0.5)')
    steps = int(steps)
    if steps <= 0:
        return (nn.MaxPool2d(2**-steps) if steps else nn.Identity()), channels
    layers: List[nn.Module] = []
    for step in range(steps):
        if step:
            if norm_cfg is not None:
                layers.append(build_norm_layer(norm_cfg, channels)[1])
            layers.append(nn.GELU())
        out_channels = channels // 2 if halve_channels else channels
        layers.append(nn.ConvTranspose2d(channels, out_channels, 2, stride=2))
        channels = out_channels
    return nn.Sequential(*layers), channels
