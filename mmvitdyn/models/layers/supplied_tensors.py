"""Tensors a module computes with but does not hold (one weight-sharing idiom).

Weights shared between blocks (a learngene's tied heads and FFN runs) or
computed from other parameters (TLEG's linear expansion) are held once, by
an owner module, and *supplied* to the modules that compute with them: the
backbone's per-block step runs the block inside :func:`supplied` (see
``ViT.block_tensors``), which sets the tensors on the released slots for the
call (as ``torch.func.functional_call`` does, but traceable by the FLOP
counters' ``torch.jit.trace``). The modules themselves hold no copy:
:func:`release` deletes the parameters that will be supplied, and
:func:`hold` makes supplied values plain parameters again (for export).
"""
from contextlib import contextmanager
from typing import Dict, Iterable, Iterator

import torch
from torch import nn


def release(module: nn.Module, names: Iterable[str]) -> None:
    """Delete the parameters ``names`` (dotted, relative to ``module``); from
    then on they must be supplied when ``module`` runs.

    Raises:
        AttributeError: ``module`` has no parameter of that name.
    """
    for name in names:
        owner, _, leaf = name.rpartition('.')
        try:
            submodule = module.get_submodule(owner)
        except AttributeError:
            submodule = None
        if submodule is None or leaf not in submodule._parameters:
            raise AttributeError(f'{type(module).__name__} has no parameter {name!r} to release')
        delattr(submodule, leaf)


@contextmanager
def supplied(module: nn.Module, tensors: Dict[str, torch.Tensor]) -> Iterator[nn.Module]:
    """Within the context, ``module`` computes with ``tensors`` (dotted name
    relative to ``module`` -> value, gradients kept) on released slots.

    Raises:
        AttributeError: A name is a parameter ``module`` holds (not released).
    """
    slots = []
    try:
        for name, value in tensors.items():
            owner, _, leaf = name.rpartition('.')
            submodule = module.get_submodule(owner)
            if leaf in submodule._parameters or leaf in submodule._buffers:
                raise AttributeError(f'{type(module).__name__} holds {name!r}; release it before '
                                     'supplying it')
            object.__setattr__(submodule, leaf, value)
            slots.append((submodule, leaf))
        yield module
    finally:
        for submodule, leaf in slots:
            object.__delattr__(submodule, leaf)


@torch.no_grad()
def hold(module: nn.Module, tensors: Dict[str, torch.Tensor]) -> None:
    """Make each of ``tensors`` (dotted name relative to ``module`` -> value) a
    parameter of ``module`` holding a detached copy of the value; it trains
    (``requires_grad``) when the value did."""
    for name, value in tensors.items():
        owner, _, leaf = name.rpartition('.')
        module.get_submodule(owner).register_parameter(
            leaf, nn.Parameter(value.detach().clone(), requires_grad=value.requires_grad))
