"""The options every benchmark tool shares: ``--device``, ``--amp``,
``--batch-sizes``, ``--runs`` and ``--json`` (docs/benchmarks.md)."""
from typing import List, Optional, Sequence

import torch

from ..benchmark.timing import AMP_DTYPES, amp_context, resolve_device


def timing_options(batch_sizes: Optional[Sequence[int]], runs: int) -> List[tuple]:
    """(flag, ``add_argument`` keywords) of each shared option; defaults
    ``batch_sizes`` (None: the tool chooses by mode) and ``runs``."""
    return [
        ('--device',
         dict(
             default='cuda' if torch.cuda.is_available() else 'cpu',
             help="'cpu', 'cuda' or 'cuda:N' (default: 'cuda' when there is one)")),
        ('--amp',
         dict(
             choices=sorted(AMP_DTYPES),
             help='run the timed work under torch.autocast in this dtype (CPU: bf16 only)')),
        ('--batch-sizes',
         dict(
             type=int,
             nargs='+',
             default=None if batch_sizes is None else list(batch_sizes),
             help='batch sizes to time (default: ' +
             ('by mode' if batch_sizes is None else ' '.join(map(str, batch_sizes))) + ')')),
        ('--runs', dict(type=int, default=runs,
                        help=f'interleaved timed rounds (default: {runs})')),
        ('--json', dict(metavar='OUT', help='also write the rows to this JSON file')),
    ]


def add_timing_options(parser, batch_sizes: Optional[Sequence[int]], runs: int) -> None:
    """Add :func:`timing_options` (defaults ``batch_sizes``, ``runs``) to a tool's
    ``argparse`` ``parser``."""
    for flag, options in timing_options(batch_sizes, runs):
        parser.add_argument(flag, **options)


def parse_timing_options(parser, args, min_runs: int = 1) -> None:
    """:func:`check_timing_options` on ``args`` and ``args.device`` made a
    ``torch.device``; a wrong value is ``parser.error`` (exit status 2)."""
    try:
        args.device = check_timing_options(args.device, args.amp, args.batch_sizes, args.runs,
                                           min_runs)
    except ValueError as error:
        parser.error(str(error))


def check_timing_options(device: str,
                         amp: Optional[str],
                         batch_sizes: Sequence[int],
                         runs: int,
                         min_runs: int = 1) -> torch.device:
    """The device ``--device`` names, the options checked; ValueError naming
    the first wrong option."""
    device = resolve_device(device)
    amp_context(device, amp)
    if min(batch_sizes) < 1:
        raise ValueError(f'--batch-sizes {" ".join(map(str, batch_sizes))}: each must be >= 1')
    if runs < min_runs:
        raise ValueError(f'--runs {runs} must be >= {min_runs}')
    return device
