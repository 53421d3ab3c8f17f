"""BEiT's feature pyramid: every map of a plain ViT rescaled by its own factor."""
from typing import Optional, Sequence, Tuple, Union

import torch
from mmengine.model import BaseModule
from mmengine.registry import MODELS
from torch import nn

from .resample import build_resampler


@MODELS.register_module()
class RescalePyramid(BaseModule):
    """Turns the maps of several ViT blocks into a feature pyramid, one factor per map.

    Map i, (B, C, H, W) -> (B, C, H * f_i, W * f_i): a factor 4 is a stride-2
    2x2 transposed convolution, GELU (after the norm, when ``norm_cfg``) and
    another one; 2 is one transposed convolution; 1 the identity; 0.5 a 2x2
    max pooling (see :func:`build_resampler`). Channels are kept; transposed
    convolutions keep PyTorch's default init. Use it through the ``pyramid``
    option of :class:`ViT`, or as a neck.

    Args:
        in_channels (int): Channels C of every map (768 for ViT-B).
        rescales (Sequence[float]): Factor per map, powers of two. Defaults
            to (4, 2, 1, 0.5).
        norm_cfg (dict, optional): Norm between two transposed convolutions,
            e.g. ``dict(type='SyncBN', requires_grad=True)``. Defaults to None
            (none, as the public DyT code).
        init_cfg (dict | list, optional): Initialisation config.
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
