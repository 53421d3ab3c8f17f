"""Local checkpoint loading that works with torch >= 2.6.

torch 2.6 made ``torch.load(weights_only=True)`` the default. mmengine 0.10.7
calls ``torch.load`` without the argument, and a Runner checkpoint holds more
than tensors (message hub, history buffers, numpy scalars), so ``--resume``
and ``load_from`` fail. Importing mmvitdyn replaces mmengine's loader for
local files with one that unpickles the full checkpoint, as mmengine did
before torch 2.6: only load checkpoints you trust.
"""
import os.path as osp

import torch
from mmengine.runner import CheckpointLoader


def load_local_checkpoint(filename: str, map_location=None) -> dict:
    """Load a trusted local checkpoint written by ``torch.save``."""
    filename = osp.expanduser(filename)
    if not osp.isfile(filename):
        raise FileNotFoundError(f'checkpoint {filename} can not be found')
    return torch.load(filename, map_location=map_location, weights_only=False)


def register_local_checkpoint_loader() -> None:
    """Make mmengine's ``CheckpointLoader`` use :func:`load_local_checkpoint`."""
    CheckpointLoader.register_scheme(prefixes='', loader=load_local_checkpoint, force=True)
