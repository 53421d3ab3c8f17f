"""OpenMP's wait policy for the processes that import mmvitdyn, set before torch
loads (docs/benchmarks.md, "On a busy machine")."""
import os
import sys

WAIT_POLICY = 'OMP_WAIT_POLICY'
DEFAULT_WAIT_POLICY = 'PASSIVE'


def prefer_passive_wait() -> bool:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless set; True when torch was not yet imported."""
    os.environ.setdefault(WAIT_POLICY, DEFAULT_WAIT_POLICY)
    return 'torch' not in sys.modules
