"""The options every benchmark tool shares: ``--device``, ``--amp``,
``--batch-sizes``, ``--runs`` and ``--json``; those of the inference benchmarks,
``--backends`` and ``--onnx-providers`` (docs/benchmarks.md)."""
from typing import List, Optional, Sequence

import torch

from ..benchmark.backends import BACKENDS
from ..benchmark.timing import AMP_DTYPES, amp_context, resolve_device
from ..deployment import ONNX_PROVIDERS


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


def add_backend_options(parser) -> None:
    """Add ``--backends`` (:data:`~mmvitdyn.benchmark.BACKENDS`, default eager) and
    ``--onnx-providers`` (:data:`~mmvitdyn.deployment.ONNX_PROVIDERS`) to ``parser``."""
    parser.add_argument(
        '--backends',
        nargs='+',
        default=['eager'],
        choices=BACKENDS,
        help='time every model under each of these, side by side (default: eager)')
    parser.add_argument(
        '--onnx-providers',
        nargs='+',
        choices=ONNX_PROVIDERS,
        default=['CPUExecutionProvider'],
        help='--backends onnx: ONNX Runtime\'s execution providers, in order of preference '
        '(default: CPUExecutionProvider; on a CUDA device CUDAExecutionProvider, or '
        'TensorrtExecutionProvider CUDAExecutionProvider)')


def parse_backend_options(parser, args) -> None:
    """Check ``--backends`` and ``--onnx-providers`` against ``args.device`` (a
    ``torch.device``: after :func:`parse_timing_options`) and ``args.amp``; a wrong
    value is ``parser.error``."""
    if len(set(args.backends)) < len(args.backends):
        parser.error(f'--backends {" ".join(args.backends)} names a backend twice')
    if 'onnx' not in args.backends:
        return
    providers = ' '.join(args.onnx_providers)
    if args.amp is not None:
        parser.error(f'--backends onnx runs ONNX Runtime on the CPU in fp32 (or on a CUDA '
                     f'device with --onnx-providers CUDAExecutionProvider): no --amp (got '
                     f'--amp {args.amp})')
    on_cpu = args.onnx_providers[0] == 'CPUExecutionProvider'
    if on_cpu != (args.device.type == 'cpu'):
        parser.error(f'--backends onnx with --onnx-providers {providers} runs ONNX Runtime on '
                     f'the {"CPU" if on_cpu else "GPU"}: it needs --device '
                     f'{"cpu" if on_cpu else "cuda"} (got --device {args.device}); the CPU '
                     'takes CPUExecutionProvider, a CUDA device CUDAExecutionProvider or '
                     'TensorrtExecutionProvider first')
