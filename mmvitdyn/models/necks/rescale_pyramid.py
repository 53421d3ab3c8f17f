"""BEiT's feature pyramid: every map of a plain ViT rescaled by its own factor."""
from typing import Optional, Sequence, Tuple, Union

import torch
from mmengine.model import BaseModule
from mmengine.registry import MODELS
from torch import nn

from .resample import build_resampler


@MODELS.register_module()
class RescalePyramid(BaseModule):
    """ViT block maps (B, C, H, W) -> (B, C, H * f_i, W * f_i), one factor per map.

    Args:
        in_channels (int): Channels C of every map.
        rescales (Sequence[float]): Powers of two. Defaults to (4, 2, 1, 0.5).
        norm_cfg (dict, optional): Norm between transposed convolutions; init_cfg.
    """

    def __init__(self,
                 in_channels: int,
                 rescales: Sequence[float] = (4, 2, 1, 0.5),
                 norm_cfg: Optional[dict] = None,
                 init_cfg: Union[dict, list, None] = None):
        super().__init__(init_cfg=init_cfg)
        self.rescales = tuple(rescales)
        self.resamplers = nn.ModuleList(
            build_resampler(factor, in_channels, norm_cfg)[0] for factor in self.rescales)

    def forward(self, inputs: Sequence[torch.Tensor]) -> Tuple[torch.Tensor, ...]:
        """One (B, C, H_i, W_i) map per factor -> (B, C, H_i * f_i, W_i * f_i) each."""
        if len(inputs) != len(self.rescales):
            raise ValueError(f'RescalePyramid got {len(inputs)} maps for its {len(self.rescales)} '
                             f'rescales {self.rescales}: give one map per factor (e.g. '
                             'out_indices of the same length)')
        return tuple(resample(x) for resample, x in zip(self.resamplers, inputs))
