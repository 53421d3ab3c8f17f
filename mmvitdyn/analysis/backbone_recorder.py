"""What a backbone saw and decided in each forward of an inference call."""
from dataclasses import dataclass
from typing import Dict, List

import torch
from torch import nn


@dataclass
class BackboneForward:
    """One backbone forward.

    Args:
        inputs (Tensor): The backbone's input (B, 3, H, W), on the CPU.
        masks (list[dict[str, Tensor]]): Per DyT block, part -> (B, N) patch
            masks of this forward; empty for a backbone that dispatches
            nothing.
    """
    inputs: torch.Tensor
    masks: List[Dict[str, torch.Tensor]]


class BackboneRecorder:
    """Record every forward of ``backbone`` inside a ``with`` block.

    An inference call may run the backbone more than once (mmseg's
    sliding-window inference runs it per crop); each run is one record.

    Example:
        >>> with BackboneRecorder(model.backbone) as forwards:
        ...     inferencer('demo.png')
        >>> forwards[0].inputs.shape, len(forwards[0].masks)
    """

    def __init__(self, backbone: nn.Module):
        self.backbone = backbone
        self.forwards: List[BackboneForward] = []
        self._handle = None

    def _record(self, backbone: nn.Module, args, output) -> None:
        dispatches = getattr(backbone, 'dispatch', None) is not None
        masks = ([{
            part: m.detach().cpu()
            for part, m in block.items()
        } for block in backbone.dispatch_masks()] if dispatches else [])
        self.forwards.append(BackboneForward(args[0].detach().cpu(), masks))

    def __enter__(self) -> List[BackboneForward]:
        self.forwards = []
        self._handle = self.backbone.register_forward_hook(self._record)
        return self.forwards

    def __exit__(self, *exc_info) -> None:
        self._handle.remove()
        self._handle = None
