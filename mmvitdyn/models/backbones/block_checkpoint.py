"""Activation checkpointing of one backbone block (the backbones' ``with_cp``).

A checkpointed block keeps none of its activations for the backward pass;
they are recomputed there, by running the block's forward again
(:func:`torch.utils.checkpoint.checkpoint`, non-reentrant). The recomputation
must compute what the first run computed, and leave no trace:

- random draws (Gumbel noise of the token dispatchers, dropout, stochastic
  depth) repeat: the checkpoint restores the CPU and the input's device RNG
  state (``preserve_rng_state=True``) before recomputing;
- the Python state the block's forward reads or records is that of the
  first run while it is recomputed, and what it was before afterwards: the
  public attributes of the block's modules (``training``, DyT's ``complete``,
  ``packed`` and the recorded ``masks``) and the attributes of the
  non-tensor keyword arguments (a token reduction's pass, whose counters
  advance block by block). So a two-pass step (complete pass, then dynamic
  pass, one backward) recomputes each pass in its own mode, and the masks,
  rates and rate loss of the last forward are not overwritten by the
  recomputation. Hooks on modules inside the block run again when it is
  recomputed.
"""
import copy
from contextlib import contextmanager, nullcontext
from typing import Callable, Dict, Iterator, List, Tuple

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

# An object's attributes, as :func:`_attributes` takes them.
State = List[Tuple[object, Dict[str, object]]]


def _attributes(obj: object) -> Dict[str, object]:
    """The attributes of ``obj`` that a forward may read or change: a module's
    public ones (its parameters, buffers, submodules and hooks live under
    ``_`` names), every one of another object; containers copied (a
    recomputation appending to a list must not change the first run's)."""
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
    """``fn(x, **kwargs)``, the forward of ``block`` on tokens ``x``, with its
    activations recomputed in the backward pass instead of kept (see the
    module docstring for what the recomputation repeats and restores).

    Args:
        block (nn.Module): The block ``fn`` runs (its modules' state is replayed).
        fn (Callable): Runs the block: tokens (B, N, C) and ``kwargs`` -> (B, N', C).
        x (Tensor): Tokens (B, N, C).
        kwargs (dict): Keyword arguments of ``fn``.

    Returns:
        Tensor: ``fn(x, **kwargs)``, (B, N', C).
    """
    state = _capture(block, kwargs)
    return checkpoint(
        fn,
        x,
        use_reentrant=False,
        preserve_rng_state=True,
        context_fn=lambda: (nullcontext(), _replayed(state)),
        **kwargs)
