"""FLOPs of a traced forward and parameters of any model, attention matmuls included."""
import sys
from typing import Tuple, Union

import torch
from mmengine.analysis import FlopAnalyzer
from torch import nn

from .op_handles import extra_flop_handles

Inputs = Union[torch.Tensor, Tuple[torch.Tensor, ...]]


def is_recognizer(model: nn.Module, base: str = 'BaseRecognizer') -> bool:
    """Whether ``model`` is an mmaction2 recogniser (``base``: a class of
    ``mmaction.models.recognizers``, e.g. 'Recognizer3D'; mmaction2 is not imported here)."""
    recognizers = sys.modules.get('mmaction.models.recognizers')
    return recognizers is not None and isinstance(model, getattr(recognizers, base))


class TensorForward(nn.Module):
    """``model(inputs, mode='tensor')`` as a plain ``forward(inputs)`` to trace;
    two-stage detectors: ``extract_feat`` (backbone and neck); mmaction2
    recognisers (whose ``'tensor'`` mode stops at the backbone): the head's
    scores of clips (B, views, C, T, H, W), one row a view (a ``Recognizer3D``
    also takes clips (B, C, T, H, W), one view each)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model
        self.features_only = hasattr(model, 'rpn_head') or hasattr(model, 'roi_head')
        self.recognizer = is_recognizer(model)
        self.single_views = is_recognizer(model, 'Recognizer3D')  # (B, C, T, H, W) clips
        self.train(model.training)

    def forward(self, inputs: torch.Tensor):
        if self.features_only:
            return self.model.extract_feat(inputs)
        if self.recognizer:
            if self.single_views and inputs.dim() == 5:
                inputs = inputs.unsqueeze(1)
            return self.model.extract_feat(inputs, stage='head')[0]
        return self.model(inputs, mode='tensor')


def flop_analyzer(model: nn.Module, inputs: Inputs) -> FlopAnalyzer:
    """mmengine's ``FlopAnalyzer`` of ``model(*inputs)`` (eval mode; e.g. one image
    (1, 3, H, W)) that also counts fused attention and ``baddbmm``, warning of nothing."""
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
