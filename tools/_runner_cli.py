"""The command line ``tools/train.py`` and ``tools/test.py`` share: the options
every Runner tool takes.

Config loading and Runner construction are :mod:`mmvitdyn.engine.runner_setup`.
"""
import argparse
import os

from mmengine.config import DictAction

from mmvitdyn.utils import TRUST_FLAG, TRUST_OPTION


def add_runner_arguments(parser: argparse.ArgumentParser, example_option: str) -> None:
    """``--cfg-options``, ``--trust-checkpoint``, ``--launcher``, ``--local-rank``."""
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        help=f'override config entries, e.g. {example_option}')
    parser.add_argument(TRUST_FLAG, **TRUST_OPTION)
    parser.add_argument('--launcher', choices=['none', 'pytorch', 'slurm', 'mpi'], default='none')
    parser.add_argument('--local_rank', '--local-rank', type=int, default=0)


def parse_runner_arguments(parser: argparse.ArgumentParser, argv=None) -> argparse.Namespace:
    """Parse, and export ``LOCAL_RANK`` for launchers that pass ``--local-rank``."""
    args = parser.parse_args(argv)
    os.environ.setdefault('LOCAL_RANK', str(args.local_rank))
    return args
