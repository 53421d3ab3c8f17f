"""``torch.compile`` of a model whose DyT blocks run the packed path, in one
graph (docs/design_notes.md)."""
from typing import Callable

import torch
from torch import nn

# The dynamo settings a compiled DyT model runs under: data-dependent output
# sizes (``nonzero``) and scalars (``.item()``) traced into the graph.
COMPILE_CONFIG = dict(capture_dynamic_output_shape_ops=True, capture_scalar_outputs=True)


def compile_model(model: nn.Module, **compile_kwargs) -> Callable:
    """``torch.compile(model, **compile_kwargs)`` under :data:`COMPILE_CONFIG`,
    ``model`` in the mode it will run in; compiles on its first call."""
    compiled = torch.compile(model, **compile_kwargs)

    def forward(*args, **kwargs):
        with torch._dynamo.config.patch(**COMPILE_CONFIG):
            return compiled(*args, **kwargs)

    return forward
