"""Timing models side by side (interleaved rounds), on the CPU or a CUDA device,
and the rows a benchmark reports (docs/benchmarks.md)."""
import math
from contextlib import contextmanager, nullcontext
from time import perf_counter, process_time
from typing import Callable, ContextManager, Dict, Iterator, List, Optional, Tuple

import torch

from ..utils import check_int, check_number

# --amp choices: the autocast dtype of each.
AMP_DTYPES = {'fp16': torch.float16, 'bf16': torch.bfloat16}


def resolve_device(name: str) -> torch.device:
    """The device ``name`` ('cpu', 'cuda' or 'cuda:N') names; ValueError if
    this machine has no such device."""
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
    """``torch.autocast`` on ``device`` in the dtype of ``amp``, a key of
    :data:`AMP_DTYPES` ('fp16' on CUDA only; None: a no-op context)."""
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
    """Time the block: the yielded dict gets ``wall`` and ``cpu`` seconds (``device``
    synchronised)."""
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
    """Seconds per call of each of ``fns``, timed in ``runs`` interleaved rounds
    after ``warmup`` untimed calls (docs/benchmarks.md).

    Args:
        min_time (float): Seconds one sample covers at least (a probe call
            sets the calls per sample). Defaults to 0: one call.
        amp (str, optional): Run under :func:`amp_context`. Defaults to None.

    Returns:
        dict[str, Tensor]: Name -> (runs, 2) float64 seconds per call by the
        wall clock and by process CPU time, rounds in order.
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
    """(row-field prefix, sample column) of each clock reported on ``device``:
    ('', 0) the wall clock, and on the CPU ('cpu_', 1) process CPU time."""
    return [('', 0)] + ([('cpu_', 1)] if device.type == 'cpu' else [])


def ratio_of_medians(numerator: Dict[str, float], denominator: Dict[str, float]) -> float:
    """The median of one :func:`spread` over that of another (every ratio reported)."""
    return numerator['median'] / denominator['median']


def comparison_rows(samples: Dict[str, torch.Tensor],
                    base: str,
                    batch_size: int,
                    device: torch.device,
                    amp: Optional[str],
                    flops: Optional[Dict[str, float]] = None,
                    unit: str = 'images') -> List[dict]:
    """A row per model of ``samples`` (:func:`time_interleaved`, ``batch_size``
    inputs a call): :func:`run_fields`, ``<unit>_per_s`` (:func:`spread`; ``unit``
    'images' or e.g. 'clips') and ``speedup`` over ``base``; with ``flops`` (per
    input) also ``gflops``, ``flop_ratio`` and ``speedup_per_flop_ratio``; on the
    CPU ``cpu_*`` too (docs/benchmarks.md)."""
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
            row[f'{clock}{unit}_per_s'] = speed[clock]
            row[f'{clock}speedup'] = ratio_of_medians(speed[clock], speeds[base][clock])
        if flops is not None:
            row.update(gflops=flops[name] / 1e9, flop_ratio=flops[base] / flops[name])
            for clock, _ in clocks:
                row[f'{clock}speedup_per_flop_ratio'] = row[f'{clock}speedup'] / row['flop_ratio']
        rows.append(row)
    return rows


def run_fields(batch_size: int, device: torch.device, amp: Optional[str]) -> Dict[str, object]:
    """``batch_size``, ``device`` (text) and ``dtype`` of every benchmark row."""
    return dict(batch_size=batch_size, device=str(device), dtype=dtype_name(amp))


def run_conditions(device: torch.device, amp: Optional[str], runs: Optional[int] = None) -> str:
    """A table title's 'cpu, 2 threads, fp32; medians of 5 interleaved rounds'."""
    threads = f', {torch.get_num_threads()} threads' if device.type == 'cpu' else ''
    rounds = '' if runs is None else f'; medians of {runs} interleaved rounds'
    return f'{device}{threads}, {dtype_name(amp)}{rounds}'
