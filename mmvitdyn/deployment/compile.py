"""``torch.compile`` of a model whose DyT blocks run the packed path.

The packed path's sizes depend on the data: the number of active tokens of
the batch (``nonzero`` of the masks) and, for attention dispatch, the padded
length of the longest image (a ``.item()``). Under :data:`COMPILE_CONFIG`
dynamo traces both as symbolic sizes, so a DyT backbone compiles into one
graph with no graph break.
"""
from typing import Callable

import torch
from torch import nn

# The dynamo settings a compiled DyT model runs under: data-dependent output
# sizes (``nonzero``) and scalars (``.item()``) traced into the graph.
COMPILE_CONFIG = dict(capture_dynamic_output_shape_ops=True, capture_scalar_outputs=True)


def compile_model(model: nn.Module, **compile_kwargs) -> Callable:
    """``torch.compile(model)`` called under :data:`COMPILE_CONFIG`.

    Args:
        model (nn.Module): The model, in the mode it will run in (eval for inference).
        **compile_kwargs: Arguments of ``torch.compile`` (``backend``, ``dynamic`` ...).

    Returns:
        Callable: Takes and returns what ``model`` does; compiles on its first call.
    """
    compiled = torch.compile(model, **compile_kwargs)

    def forward(*args, **kwargs):
        with torch._dynamo.config.patch(**COMPILE_CONFIG):
            return compiled(*args, **kwargs)

    return forward
