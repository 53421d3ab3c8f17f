"""What a backbone saw and decided in each forward of an inference call."""
from dataclasses import dataclass
from typing import Dict, List

import torch
from torch import nn


@dataclass
class BackboneForward:
    """One backbone forward: its ``inputs`` (B, 3, H, W) and ``masks``, per DyT block
    part -> (B, N) patch masks (empty without dispatch), on the CPU."""
    inputs: torch.Tensor
    masks: List[Dict[str, torch.Tensor]]


class BackboneRecorder:
    """Record every forward of ``backbone`` (e.g. one per sliding-window crop)
    inside a ``with`` block, which yields the list of :class:`BackboneForward`."""

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
