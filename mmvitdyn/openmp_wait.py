"""OpenMP's wait policy for the processes that import mmvitdyn.

torch's CPU kernels run on OpenMP threads. With the default (active) policy a
thread that reaches the end of a parallel region spins on its core waiting
for the others; when another process holds one of those cores, the spinning
thread burns the time slice the late thread needs, and a step slows down far
more than the lost core accounts for. ``PASSIVE`` makes waiting threads sleep,
so a step slows down in proportion to the load (figures: docs/benchmarks.md,
"On a busy machine").

OpenMP reads the policy once, when torch loads it, so it is set before
anything imports torch: first thing in ``mmvitdyn/__init__.py``, and for
every process the tools start, which inherit the environment. A value the
user has set is kept.
"""
import os
import sys

WAIT_POLICY = 'OMP_WAIT_POLICY'
DEFAULT_WAIT_POLICY = 'PASSIVE'


def prefer_passive_wait() -> bool:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless the user set a policy.

    Returns:
        bool: whether the policy in the environment reaches this process's
        torch, i.e. torch was not imported yet.
    """
    os.environ.setdefault(WAIT_POLICY, DEFAULT_WAIT_POLICY)
    return 'torch' not in sys.modules
