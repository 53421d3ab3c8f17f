"""Timing models side by side, on the CPU or a CUDA device, and the benchmarks' report.

:func:`time_interleaved` times, :func:`comparison_rows` makes the rows,
:func:`write_report` writes them as JSON and :func:`format_table` prints them;
:func:`add_timing_options` adds the options every benchmark shares
(docs/benchmarks.md).
"""
import math
import platform
from contextlib import contextmanager, nullcontext
from time import perf_counter, process_time
from typing import Callable, ContextManager, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import torch

from mmvitdyn.utils import check_int, check_number, dump_json_atomically

# --amp choices: the autocast dtype of each.
AMP_DTYPES = {'fp16': torch.float16, 'bf16': torch.bfloat16}


def resolve_device(name: str) -> torch.device:
    """The device ``name`` ('cpu', 'cuda' or 'cuda:N') names, checked to exist here.

    Raises:
        ValueError: ``name`` is not one of those forms, or names a CUDA device
            this machine does not have.
    """
    allowed = "'cpu', 'cuda' or 'cuda:N'"
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ValueError(f'device={name!r} must be {allowed}') from None
    if device.type not in ('cpu', 'cuda'):
        raise ValueError(f'device={name!r} must be {allowed}')
    if device.type == 'cuda':
        if not torch.cuda.is_available():
            raise ValueError(f"device={name!r} needs CUDA, and this torch ({torch.__version__}) "
                             "finds no CUDA device here; use device='cpu'")
        count = torch.cuda.device_count()
        if device.index is not None and device.index >= count:
            raise ValueError(f'device={name!r}: this machine has {count} CUDA device(s), '
                             f"'cuda:0' to 'cuda:{count - 1}'")
    return device


def amp_context(device: torch.device, amp: Optional[str]) -> ContextManager:
    """``torch.autocast`` on ``device`` in the dtype of ``amp`` (a no-op context for None).

    Args:
        device (torch.device): Where the models run.
        amp (str, optional): A key of :data:`AMP_DTYPES` ('fp16' on CUDA only).

    Raises:
        ValueError: ``amp`` is not a key of :data:`AMP_DTYPES`, or is 'fp16' on the CPU.
    """
    if amp is None:
        return nullcontext()
    if amp not in AMP_DTYPES:
        raise ValueError(f'amp={amp!r} must be one of {sorted(AMP_DTYPES)} or None')
    if device.type == 'cpu' and amp == 'fp16':
        raise ValueError("amp='fp16' is not available on the CPU (its autocast runs in "
                         "bfloat16); use amp='bf16', or a CUDA device")
    return torch.autocast(device.type, dtype=AMP_DTYPES[amp])


def dtype_name(amp: Optional[str]) -> str:
    """The compute dtype a row reports: 'fp32', or the autocast dtype of ``amp``."""
    return amp or 'fp32'


def synchronize(device: torch.device) -> None:
    """Wait for the work queued on ``device`` (CUDA); nothing to wait for on the CPU."""
    if device.type == 'cuda':
        torch.cuda.synchronize(device)


@contextmanager
def timed_region(device: torch.device) -> Iterator[Dict[str, float]]:
    """Time the ``with`` block: the dict it yields gets ``wall`` and ``cpu`` seconds
    (``device``'s queued work waited for before the clocks start and stop)."""
    seconds = {}
    synchronize(device)
    wall, cpu = perf_counter(), process_time()
    yield seconds
    synchronize(device)
    seconds.update(wall=perf_counter() - wall, cpu=process_time() - cpu)


def time_interleaved(fns: Dict[str, Callable[[], object]],
                     runs: int,
                     device: torch.device,
                     warmup: int = 1,
                     min_time: float = 0.,
                     amp: Optional[str] = None) -> Dict[str, torch.Tensor]:
    """Seconds per call of each function, the functions timed in interleaved rounds.

    Every function is first called ``warmup`` times, untimed. With
    ``min_time`` > 0 each is then called once more to choose how many calls
    one sample covers (enough for ``min_time`` seconds; that call is not a
    sample). Each of the ``runs`` rounds then takes one sample of every
    function, the order shifted by one from round to round (round r starts
    with function r mod n), each sample a :func:`timed_region`.

    Args:
        fns (dict[str, Callable]): The functions to compare, by name.
        runs (int): Rounds (samples per function), >= 1.
        device (torch.device): The device the functions run on (synchronised on CUDA).
        warmup (int): Untimed calls of each function first. Defaults to 1.
        min_time (float): Seconds one sample covers at least. Defaults to 0
            (one call per sample).
        amp (str, optional): Call the functions under :func:`amp_context` in
            this dtype. Defaults to None (no autocast).

    Returns:
        dict[str, Tensor]: Name -> (runs, 2) float64 seconds per call, by wall
        clock (column 0) and by process CPU time (column 1), rounds in order.
    """
    check_int(runs, 'runs', minimum=1)
    check_int(warmup, 'warmup', minimum=0)
    check_number(min_time, 'min_time', low=0)
    repeats = {}
    names, samples = list(fns), {name: [] for name in fns}
    with amp_context(device, amp):
        for name, fn in fns.items():
            for _ in range(warmup):
                fn()
            repeats[name] = 1
            if min_time > 0:
                with timed_region(device) as probe:
                    fn()
                repeats[name] = max(1, math.ceil(min_time / max(probe['wall'], 1e-9)))
        for run in range(runs):
            shift = run % len(names)
            for name in names[shift:] + names[:shift]:
                with timed_region(device) as seconds:
                    for _ in range(repeats[name]):
                        fns[name]()
                samples[name].append(
                    (seconds['wall'] / repeats[name], seconds['cpu'] / repeats[name]))
    return {name: torch.tensor(values, dtype=torch.float64) for name, values in samples.items()}


def spread(values: torch.Tensor) -> Dict[str, float]:
    """Median, quartiles (linear interpolation) and extremes of 1-D ``values``."""
    q = torch.quantile(values.double(), torch.tensor([0., .25, .5, .75, 1.],
                                                     dtype=torch.float64)).tolist()
    return dict(median=q[2], q1=q[1], q3=q[3], min=q[0], max=q[4])


def clock_columns(device: torch.device) -> List[Tuple[str, int]]:
    """(row-field prefix, column of :func:`time_interleaved`'s samples) of each
    clock timed on ``device``: the wall clock (``''``, column 0), and on the
    CPU the process CPU time (``'cpu_'``, column 1)."""
    return [('', 0)] + ([('cpu_', 1)] if device.type == 'cpu' else [])


def ratio_of_medians(numerator: Dict[str, float], denominator: Dict[str, float]) -> float:
    """The median of one :func:`spread` over that of another: every ratio a benchmark
    reports, so that it equals the ratio of the medians printed beside it."""
    return numerator['median'] / denominator['median']


def comparison_rows(samples: Dict[str, torch.Tensor],
                    base: str,
                    batch_size: int,
                    device: torch.device,
                    amp: Optional[str],
                    flops: Optional[Dict[str, float]] = None) -> List[dict]:
    """A row per timed model: images/s and the speed-up over ``base``, with FLOPs.

    Args:
        samples (dict[str, Tensor]): :func:`time_interleaved`'s seconds per call.
        base (str): The model the speed-ups are relative to.
        batch_size (int): Images per call.
        device (torch.device): Where the models ran.
        amp (str, optional): The ``--amp`` they ran under.
        flops (dict[str, float], optional): FLOPs per image of each model.
            Defaults to None (no FLOP columns).

    Returns:
        list[dict]: In the order of ``samples``: ``model``, ``batch_size``,
        ``device``, ``dtype``, ``images_per_s`` (:func:`spread` over the
        rounds) and ``speedup`` (its median over ``base``'s,
        :func:`ratio_of_medians`); with ``flops``: ``gflops``, ``flop_ratio``
        (``base``'s FLOPs over the model's, the ideal speed-up) and
        ``speedup_per_flop_ratio`` (speed-up over it: 1 when the FLOP saving
        all becomes speed); on the CPU also the ``cpu_*`` figures by process
        CPU time.
    """
    clocks = clock_columns(device)
    speeds = {
        name: {
            clock: spread(batch_size / seconds[:, column])
            for clock, column in clocks
        }
        for name, seconds in samples.items()
    }
    rows = []
    for name, speed in speeds.items():
        row = dict(model=name, **run_fields(batch_size, device, amp))
        for clock, _ in clocks:
            row[f'{clock}images_per_s'] = speed[clock]
            row[f'{clock}speedup'] = ratio_of_medians(speed[clock], speeds[base][clock])
        if flops is not None:
            row.update(gflops=flops[name] / 1e9, flop_ratio=flops[base] / flops[name])
            for clock, _ in clocks:
                row[f'{clock}speedup_per_flop_ratio'] = row[f'{clock}speedup'] / row['flop_ratio']
        rows.append(row)
    return rows


def run_fields(batch_size: int, device: torch.device, amp: Optional[str]) -> Dict[str, object]:
    """The entries of every benchmark row that say how it ran: ``batch_size``,
    ``device`` (as text) and ``dtype`` (:func:`dtype_name` of ``amp``)."""
    return dict(batch_size=batch_size, device=str(device), dtype=dtype_name(amp))


def run_conditions(device: torch.device, amp: Optional[str], runs: Optional[int] = None) -> str:
    """How a table's rows were timed, for its title: 'cpu, 2 threads, fp32; medians
    of 5 interleaved rounds' (the threads on the CPU only, the rounds unless
    ``runs`` is None)."""
    threads = f', {torch.get_num_threads()} threads' if device.type == 'cpu' else ''
    rounds = '' if runs is None else f'; medians of {runs} interleaved rounds'
    return f'{device}{threads}, {dtype_name(amp)}{rounds}'


def machine(device: torch.device) -> Dict[str, object]:
    """What a report records of where it ran: torch, threads, the device's name."""
    name = torch.cuda.get_device_name(device) if device.type == 'cuda' else platform.processor()
    return dict(
        torch=torch.__version__,
        threads=torch.get_num_threads(),
        device=str(device),
        device_name=name or platform.machine())


def write_report(path: str, tool: str, settings: dict, rows: Sequence[dict],
                 device: torch.device) -> None:
    """Write a benchmark's report to ``path`` as JSON (atomically).

    Args:
        path (str): The JSON file.
        tool (str): The benchmark that made it.
        settings (dict): Its options (``torch.device`` values are written as text).
        rows (Sequence[dict]): Its rows.
        device (torch.device): Where it ran (see :func:`machine`).
    """
    settings = {
        key: str(value) if isinstance(value, torch.device) else value
        for key, value in settings.items()
    }
    dump_json_atomically(
        dict(tool=tool, settings=settings, machine=machine(device), rows=list(rows)), path)


# A table column: its header, what a cell shows (a row entry by key, a dotted key
# reaching into nested dicts: 'images_per_s.median'; or a function of the row)
# and the format spec; text columns (spec ending in 's') are left-aligned.
Column = Tuple[str, Union[str, Callable[[dict], object]], str]


def iqr(key: str, fmt: str) -> Callable[[dict], Optional[str]]:
    """A cell function: the quartiles of the :func:`spread` at ``key``, 'q1-q3'."""

    def cell(row: dict) -> Optional[str]:
        figure = row.get(key)
        return None if figure is None else f'{figure["q1"]:{fmt}}-{figure["q3"]:{fmt}}'

    return cell


def format_table(rows: Sequence[dict], columns: Sequence[Column]) -> str:
    """``rows`` as aligned text: a header line, a rule, then a line per row.

    Args:
        rows (Sequence[dict]): The rows; an entry a row lacks prints as '-'.
        columns (Sequence[Column]): (header, key or function, format spec) of each column.

    Returns:
        str: The table, without a final newline.
    """
    cells = [[_cell(row, key, fmt) for _, key, fmt in columns] for row in rows]
    widths = [
        max([len(header)] + [len(line[i]) for line in cells])
        for i, (header, _, _) in enumerate(columns)
    ]

    def line(values):
        return ' '.join(
            value.ljust(width) if fmt.endswith('s') else value.rjust(width)
            for value, width, (_, _, fmt) in zip(values, widths, columns)).rstrip()

    header = line([header for header, _, _ in columns])
    return '\n'.join([header, '-' * len(header)] + [line(values) for values in cells])


def _cell(row: dict, key, fmt: str) -> str:
    if callable(key):
        value = key(row)
    else:
        value = row
        for part in key.split('.'):
            value = value.get(part) if isinstance(value, dict) else None
    return '-' if value is None else format(value, fmt)


def timing_options(batch_sizes: Optional[Sequence[int]], runs: int) -> List[tuple]:
    """The benchmarks' shared options ``--device``, ``--amp``, ``--batch-sizes``,
    ``--runs`` and ``--json``, checked by :func:`check_timing_options`.

    Args:
        batch_sizes (Sequence[int], optional): Default ``--batch-sizes``; None
            when the tool chooses them after parsing (by mode).
        runs (int): Default ``--runs``.

    Returns:
        list[tuple[str, dict]]: (flag, ``add_argument`` keywords) per option.
    """
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
    """Check the values of :func:`timing_options`.

    Returns:
        torch.device: The device ``--device`` names.

    Raises:
        ValueError: Naming the first wrong option and what it allows.
    """
    device = resolve_device(device)
    amp_context(device, amp)
    if min(batch_sizes) < 1:
        raise ValueError(f'--batch-sizes {" ".join(map(str, batch_sizes))}: each must be >= 1')
    if runs < min_runs:
        raise ValueError(f'--runs {runs} must be >= {min_runs}')
    return device
