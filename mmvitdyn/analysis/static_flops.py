"""Static FLOPs and parameters of any model, attention matmuls included.

The count is that of a traced forward, so token counts that change inside the
network (ToMe merging, EViT / DynamicViT pruning at inference) are followed:
each operator is counted at the shapes it ran with.
"""
from typing import Tuple, Union

import torch
from mmengine.analysis import FlopAnalyzer
from torch import nn

from .op_handles import extra_flop_handles

Inputs = Union[torch.Tensor, Tuple[torch.Tensor, ...]]


class TensorForward(nn.Module):
    """``model(inputs, mode='tensor')`` as a plain ``forward(inputs)`` to trace.

    OpenMMLab models take a ``mode`` argument that a trace cannot pass; this
    wrapper fixes it, so the count covers backbone, neck and head. Detectors
    whose heads need proposals or data samples (two-stage mmdet models) are
    counted through ``extract_feat``: backbone and neck.
    """

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model
        self.features_only = hasattr(model, 'rpn_head') or hasattr(model, 'roi_head')
        self.train(model.training)

    def forward(self, inputs: torch.Tensor):
        if self.features_only:
            return self.model.extract_feat(inputs)
        return self.model(inputs, mode='tensor')


def flop_analyzer(model: nn.Module, inputs: Inputs) -> FlopAnalyzer:
    """mmengine's ``FlopAnalyzer`` that also counts fused attention (and ``baddbmm``).

    Per-operator warnings are off: element-wise operators are uncounted by
    convention; ``unsupported_ops()`` still lists every uncounted operator.

    Args:
        model (nn.Module): Traced with ``model(*inputs)``; put it in eval mode first.
        inputs (Tensor | tuple[Tensor]): Example inputs, e.g. one image (1, 3, H, W).
    """
    analyzer = FlopAnalyzer(model, inputs).set_op_handle(**extra_flop_handles())
    analyzer.unsupported_ops_warnings(False)
    analyzer.uncalled_modules_warnings(False)
    return analyzer


def count_flops(model: nn.Module, inputs: Inputs) -> int:
    """Total FLOPs (multiply-adds) of ``model(*inputs)`` for the whole batch."""
    with torch.no_grad():
        return flop_analyzer(model, inputs).total()


def count_params(model: nn.Module, trainable_only: bool = False) -> int:
    """Number of parameters (optionally only those with ``requires_grad``)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
