"""OpenMP's wait policy for the processes that import mmvitdyn, set before torch
loads (docs/benchmarks.md, "On a busy machine")."""
import os
import sys

WAIT_POLICY = 'OMP_WAIT_POLICY'
DEFAULT_WAIT_POLICY = 'PASSIVE'
# libgomp's (torch's OpenMP) spins of a waiting thread before it sleeps.
SPIN_COUNT = 'GOMP_SPINCOUNT'
DEFAULT_SPIN_COUNT = '3000'


def prefer_passive_wait() -> bool:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless set and, under PASSIVE, ``GOMP_SPINCOUNT``
    to a short spin unless set; True when torch was not yet imported."""
    if os.environ.setdefault(WAIT_POLICY, DEFAULT_WAIT_POLICY).upper() == DEFAULT_WAIT_POLICY:
        os.environ.setdefault(SPIN_COUNT, DEFAULT_SPIN_COUNT)
    return 'torch' not in sys.modules
