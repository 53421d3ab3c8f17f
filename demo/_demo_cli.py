"""What ``image_demo.py`` and ``video_demo.py`` share: their arguments (INPUT CONFIG
CHECKPOINT, ``--out-dir``, ``--device``, ``--cfg-options``, ``--trust-checkpoint``), the
checks before a model is built and the refusal of an output that is an input."""
import argparse
import os.path as osp
from contextlib import contextmanager
from typing import ContextManager, Iterator, List, Sequence

import torch
from mmengine.config import Config, DictAction

from mmvitdyn.checkpoint import is_local_path, trusted_checkpoints, trusted_names
from mmvitdyn.cli import add_trust_option
from mmvitdyn.engine import SetupError, config_inputs, load_config
from mmvitdyn.utils import OutputIsInputError, refuse_overwriting_inputs


def parse_demo_args(description: str,
                    input_name: str,
                    input_help: str,
                    config_help: str,
                    out_dir: str,
                    argv=None) -> tuple:
    """``(parser, args)`` of a demo whose positional input is ``input_name`` (``input_help``),
    then CONFIG (``config_help``) and CHECKPOINT; ``--out-dir`` defaults to ``out_dir``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(input_name, help=input_help)
    parser.add_argument('config', help=config_help)
    parser.add_argument('checkpoint', help='trained weights')
    parser.add_argument('--out-dir', default=out_dir, help='where pictures go')
    parser.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')
    parser.add_argument(
        '--cfg-options', nargs='+', action=DictAction, help='override config entries')
    add_trust_option(parser)
    return parser, parser.parse_args(argv)


def trusted(args) -> ContextManager:
    """The context in which ``args.checkpoint`` loads as ``--trust-checkpoint`` says."""
    return trusted_checkpoints(trusted_names(args.trust_checkpoint, [args.checkpoint]))


@contextmanager
def setup_errors(parser) -> Iterator[None]:
    """A :class:`SetupError` or :class:`OutputIsInputError` raised inside becomes
    ``parser.error`` (its message, exit status 2)."""
    try:
        yield
    except (SetupError, OutputIsInputError) as err:
        parser.error(str(err))


def load_demo_config(args) -> Config:
    """``args.config`` with ``args.cfg_options``; a local checkpoint that is no file is a
    :class:`SetupError`."""
    if is_local_path(args.checkpoint) and not osp.isfile(args.checkpoint):
        raise SetupError(f'checkpoint {args.checkpoint!r} does not exist')
    return load_config(args.config, args.cfg_options)


def refuse_outputs_over_inputs(outputs: Sequence[str], inputs: List[str], cfg: Config,
                               args) -> None:
    """:class:`OutputIsInputError` if one of ``outputs`` is (or lies in a folder of) one of
    ``inputs``, the files ``cfg`` reads or ``args.checkpoint``."""
    read = inputs + config_inputs(cfg) + [args.checkpoint]
    for path in outputs:
        refuse_overwriting_inputs(path, read)
