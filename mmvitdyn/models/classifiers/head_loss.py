"""The classification loss of logits the classifier already computed."""
from typing import List

import torch
from torch import nn


def head_loss(head: nn.Module, logits: torch.Tensor, data_samples: List) -> torch.Tensor:
    """``head.loss`` of a ``ClsHead`` on given ``logits`` (docs/backbones.md)."""
    return head._get_loss(logits, data_samples)['loss']
