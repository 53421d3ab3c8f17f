"""Activation checkpointing of one backbone block (``with_cp``; docs/backbones.md)."""
import copy
from contextlib import contextmanager, nullcontext
from typing import Callable, Dict, Iterator, List, Tuple

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

# An object's attributes, as :func:`_attributes` takes them.
State = List[Tuple[object, Dict[str, object]]]


def _attributes(obj: object) -> Dict[str, object]:
    """The attributes of ``obj`` a forward may read or change (a module's public ones,
    every one of another object), containers copied."""
    return {
        key: copy.copy(value) if isinstance(value, (list, dict, set)) else value
        for key, value in vars(obj).items()
        if not (isinstance(obj, nn.Module) and key.startswith('_'))
    }


def _capture(block: nn.Module, kwargs: dict) -> State:
    """The state of the block's modules and of the non-tensor keyword arguments."""
    objects = [*block.modules()] + [
        value for value in kwargs.values()
        if hasattr(value, '__dict__') and not isinstance(value, torch.Tensor)
    ]
    return [(obj, _attributes(obj)) for obj in objects]


def _restore(state: State) -> None:
    """Set every object's attributes back to ``state`` (removing those added since)."""
    for obj, attributes in state:
        current = vars(obj)
        for key in [k for k in _attributes(obj) if k not in attributes]:
            del current[key]
        current.update(attributes)


@contextmanager
def _replayed(state: State) -> Iterator[None]:
    """Within the context the objects have the attributes of ``state``; then
    those they had when it was entered."""
    now = [(obj, _attributes(obj)) for obj, _ in state]
    _restore(state)
    try:
        yield
    finally:
        _restore(now)


def checkpoint_block(block: nn.Module, fn: Callable[..., torch.Tensor], x: torch.Tensor,
                     kwargs: dict) -> torch.Tensor:
    """``fn(x, **kwargs)`` -> (B, N', C), the forward of ``block`` on tokens x
    (B, N, C), its activations recomputed in the backward pass (the block's
    module state and the kwargs' attributes replayed)."""
    state = _capture(block, kwargs)
    return checkpoint(
        fn,
        x,
        use_reentrant=False,
        preserve_rng_state=True,
        context_fn=lambda: (nullcontext(), _replayed(state)),
        **kwargs)
