"""ViTDet's simple feature pyramid."""
from typing import Sequence, Tuple, Union

import torch
import torch.nn.functional as F
from mmcv.cnn import ConvModule
from mmengine.model import BaseModule
from mmengine.registry import MODELS
from torch import nn

from ...utils import check_int, check_norm_cfg
from .resample import build_resampler


@MODELS.register_module()
class SimpleFPN(BaseModule):
    """ViTDet's feature pyramid from a plain ViT's single map (docs/design_notes.md).

    Args:
        in_channels (int): Channels C of the backbone map.
        out_channels (int): Channels of every output level.
        scale_factors (Sequence[float]): Powers of two. Defaults to (4, 2, 1,
            0.5): strides 4, 8, 16, 32 from a stride-16 map.
        num_outs (int): Outputs, at least ``len(scale_factors)``. Defaults to 5.
        norm_cfg (dict): Norm after every convolution. Defaults to
            ``dict(type='LN2d', eps=1e-6)``.
        init_cfg (dict | list, optional): Initialisation config.
    """

    def __init__(self,
                 in_channels: int,
                 out_channels: int,
                 scale_factors: Sequence[float] = (4, 2, 1, 0.5),
                 num_outs: int = 5,
                 norm_cfg: dict = dict(type='LN2d', eps=1e-6),
                 init_cfg: Union[dict, list, None] = None):
        super().__init__(init_cfg=init_cfg)
        check_int(in_channels, 'in_channels', minimum=1)
        check_int(out_channels, 'out_channels', minimum=1)
        check_int(num_outs, 'num_outs', minimum=1)
        check_norm_cfg(norm_cfg)
        if num_outs < len(scale_factors):
            raise ValueError(f'num_outs={num_outs} is fewer than the {len(scale_factors)} '
                             f'scale_factors {tuple(scale_factors)}')
        self.num_outs = num_outs
        self.resamplers = nn.ModuleList()
        self.lateral_convs = nn.ModuleList()
        self.output_convs = nn.ModuleList()
        for factor in scale_factors:
            resampler, channels = build_resampler(
                factor, in_channels, norm_cfg, halve_channels=True)
            self.resamplers.append(resampler)
            self.lateral_convs.append(
                ConvModule(channels, out_channels, 1, bias=False, norm_cfg=norm_cfg, act_cfg=None))
            self.output_convs.append(
                ConvModule(
                    out_channels,
                    out_channels,
                    3,
                    padding=1,
                    bias=False,
                    norm_cfg=norm_cfg,
                    act_cfg=None))

    def forward(self, inputs: Sequence[torch.Tensor]) -> Tuple[torch.Tensor, ...]:
        """The backbone's outputs (its last map is used) -> ``num_outs`` maps, fine to coarse."""
        x = inputs[-1]
        outs = [
            output(lateral(resample(x))) for resample, lateral, output in zip(
                self.resamplers, self.lateral_convs, self.output_convs)
        ]
        while len(outs) < self.num_outs:
            outs.append(F.max_pool2d(outs[-1], 1, stride=2))
        return tuple(outs)
