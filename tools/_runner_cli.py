"""The command line ``tools/train.py`` and ``tools/test.py`` share: the options
every Runner tool takes.

Config loading is :mod:`mmvitdyn.engine.config_loading`, Runner construction
:mod:`mmvitdyn.engine.runner_setup`.
"""
import argparse
import os

from mmengine.config import DictAction

from mmvitdyn.cli import add_trust_option


def add_runner_arguments(parser: argparse.ArgumentParser, example_option: str) -> None:
    """``--cfg-options``, ``--trust-checkpoint``, ``--launcher``, ``--local-rank``."""
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        help=f'override config entries, e.g. {example_option}')
    add_trust_option(parser)
    parser.add_argument('--launcher', choices=['none', 'pytorch', 'slurm', 'mpi'], default='none')
    parser.add_argument('--local_rank', '--local-rank', type=int, default=0)


def parse_runner_arguments(parser: argparse.ArgumentParser, argv=None) -> argparse.Namespace:
    """Parse, and export ``LOCAL_RANK`` for launchers that pass ``--local-rank``."""
    args = parser.parse_args(argv)
    os.environ.setdefault('LOCAL_RANK', str(args.local_rank))
    return args
