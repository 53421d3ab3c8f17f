"""Tensors a module computes with but does not hold (docs/design_notes.md)."""
from contextlib import contextmanager
from typing import Dict, Iterable, Iterator

import torch
from torch import nn


def release(module: nn.Module, names: Iterable[str]) -> None:
    """Delete the parameters ``names`` (dotted), to be supplied from then on.

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
    """Within the context ``module`` computes with ``tensors`` (dotted name ->
    value) on its released slots.

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
    """Make each of ``tensors`` (dotted name -> value) a parameter holding a
    detached copy, with the value's ``requires_grad``."""
    for name, value in tensors.items():
        owner, _, leaf = name.rpartition('.')
        module.get_submodule(owner).register_parameter(
            leaf, nn.Parameter(value.detach().clone(), requires_grad=value.requires_grad))
