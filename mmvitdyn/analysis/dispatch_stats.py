"""Activation rates per image and per dispatched part, from dispatch masks."""
from typing import Dict, List, Tuple

import torch


def part_rates(masks: List[Dict[str, torch.Tensor]]) -> Tuple[List[str], torch.Tensor]:
    """Part names ``'{block}.{part}'`` (P,) and the active fraction of patch tokens
    (P, B) on the CPU, from ``DyTViT.dispatch_masks()`` (part -> (B, N) per block)."""
    names = [f'{i}.{part}' for i, block in enumerate(masks) for part in block]
    if not names:
        raise ValueError('no dispatch masks: the model dispatches nothing or has not run yet')
    rates = torch.stack([(m.detach() != 0).float().mean(1) for block in masks
                         for m in block.values()])
    return names, rates.cpu()
