"""Activation rates per image and per dispatched part, from dispatch masks."""
from typing import Dict, List, Tuple

import torch


def part_rates(masks: List[Dict[str, torch.Tensor]]) -> Tuple[List[str], torch.Tensor]:
    """Active fraction of patch tokens per dispatched part and image.

    Args:
        masks (list[dict]): Per block, part -> (B, N_patches) mask, as
            ``DyTViT.dispatch_masks()`` returns.

    Returns:
        tuple: Part names ``'{block}.{part}'`` (P,) and rates (P, B) on the CPU.
    """
    names = [f'{i}.{part}' for i, block in enumerate(masks) for part in block]
    if not names:
        raise ValueError('no dispatch masks: the model dispatches nothing or has not run yet')
    rates = torch.stack([(m.detach() != 0).float().mean(1) for block in masks
                         for m in block.values()])
    return names, rates.cpu()
