"""A benchmark's report: its rows as JSON and as an aligned text table."""
import platform
from typing import Callable, Dict, Optional, Sequence, Tuple, Union

import torch

from ..utils import dump_json_atomically


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
    """Write ``tool``'s ``settings`` (devices as text), :func:`machine` and
    ``rows`` to ``path`` as JSON, atomically."""
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
    """A cell function: 'q1-q3' of the :func:`~mmvitdyn.benchmark.timing.spread` at ``key``."""

    def cell(row: dict) -> Optional[str]:
        figure = row.get(key)
        return None if figure is None else f'{figure["q1"]:{fmt}}-{figure["q3"]:{fmt}}'

    return cell


def format_table(rows: Sequence[dict], columns: Sequence[Column]) -> str:
    """``rows`` as aligned text under a header and a rule, one line per row (an
    entry a row lacks prints as '-'), without a final newline."""
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
