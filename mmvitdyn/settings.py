"""Every environment variable mmvitdyn reads, each by a function naming it."""
import math
import os
from typing import List

from .openmp_wait import DEFAULT_WAIT_POLICY, WAIT_POLICY

# Where launchers put a process's global rank (torchrun, Slurm, Open MPI, MPICH).
RANK_VARIABLES = ('RANK', 'SLURM_PROCID', 'OMPI_COMM_WORLD_RANK', 'PMI_RANK')
# What torch.distributed's ``env://`` initialisation reads (torchrun sets them).
TORCHRUN_VARIABLES = ('RANK', 'WORLD_SIZE', 'MASTER_ADDR', 'MASTER_PORT')
# This process's device index on its node (torchrun sets it).
LOCAL_RANK = 'LOCAL_RANK'
# 1: fully unpickle every checkpoint (docs/checkpoints.md).
TRUST_ENV = 'MMVITDYN_TRUST_CHECKPOINTS'
TRUST_VALUES = {'1': True, '0': False, '': False}
# The most data a checkpoint may declare, as a multiple of its file size.
EXPANSION_ENV = 'MMVITDYN_CHECKPOINT_MAX_EXPANSION'
DEFAULT_MAX_EXPANSION = 4.0


def launcher_rank() -> int:
    """The first of :data:`RANK_VARIABLES` that holds a number, else 0."""
    for name in RANK_VARIABLES:
        if os.environ.get(name, '').isdigit():
            return int(os.environ[name])
    return 0


def missing_torchrun_variables() -> List[str]:
    """The :data:`TORCHRUN_VARIABLES` that are not set."""
    return [name for name in TORCHRUN_VARIABLES if name not in os.environ]


def local_rank() -> int:
    """``LOCAL_RANK`` as a number (KeyError when it is not set)."""
    return int(os.environ[LOCAL_RANK])


def trust_all_checkpoints() -> bool:
    """Whether ``MMVITDYN_TRUST_CHECKPOINTS=1`` trusts every checkpoint."""
    value = os.environ.get(TRUST_ENV, '')
    if value not in TRUST_VALUES:
        raise ValueError(f'{TRUST_ENV}={value!r} is not one of {sorted(TRUST_VALUES)} '
                         '(1: fully unpickle every checkpoint, which can run code from them)')
    return TRUST_VALUES[value]


def max_checkpoint_expansion() -> float:
    """The bound on declared data over file size (``MMVITDYN_CHECKPOINT_MAX_EXPANSION``)."""
    value = os.environ.get(EXPANSION_ENV, '')
    if not value:
        return DEFAULT_MAX_EXPANSION
    try:
        factor = float(value)
    except ValueError:
        factor = float('nan')
    if not (math.isfinite(factor) and factor > 0):
        raise ValueError(f'{EXPANSION_ENV}={value!r} must be a finite number > 0 (the most '
                         'data a checkpoint may declare, as a multiple of its file size; '
                         f'default {DEFAULT_MAX_EXPANSION})')
    return factor


def openmp_threads_spin() -> bool:
    """Whether ``OMP_WAIT_POLICY`` is ``ACTIVE`` (idle threads spin; mmvitdyn sets
    ``PASSIVE`` when it is unset, mmvitdyn/openmp_wait.py)."""
    return os.environ.get(WAIT_POLICY, DEFAULT_WAIT_POLICY).upper() == 'ACTIVE'
