"""The classification loss of logits the classifier already computed."""
from typing import List

import torch
from torch import nn


def head_loss(head: nn.Module, logits: torch.Tensor, data_samples: List) -> torch.Tensor:
    """The loss ``head.loss(feats, data_samples)`` of an mmpretrain ``ClsHead``
    (``data_samples``: its ``DataSample`` list) gives when ``head(feats)``
    is ``logits`` (B, num_classes), without a second head pass: hard labels
    or the mixed scores of batch augments, the head's own ``loss_module``.

    mmpretrain exposes this only as ``ClsHead._get_loss``; the tested stack
    (requirements/constraints.txt) pins it and
    ``tests/test_models/test_classifiers/test_head_loss.py`` checks it
    against ``head.loss``.
    """
    return head._get_loss(logits, data_samples)['loss']
