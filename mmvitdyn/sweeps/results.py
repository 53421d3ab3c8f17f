"""The results of a sweep's cells (or of any work dirs) as the papers' tables.

:func:`cell_results` reads what a cell's runs logged, :func:`build_blocks` lays
the figures out as a sweep's ``table`` asks (docs/sweeps.md says from where
each figure comes and how the table is laid out).
"""
import csv
import io
import os.path as osp
import re
from dataclasses import dataclass
from glob import glob
from statistics import mean
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import yaml

from ..utils.work_dir_lock import LOCK_NAME
from .cell_states import STATES, CellState
from .launch import EXIT_RECORD
from .run_records import (DamagedRecordError, final_step, final_validation, is_validation,
                          json_record, record_file, run_dirs, run_records)
from .sweep_file import Cell, Sweep

METRIC_NAMES = {
    'accuracy/top1_best_epoch': 'top-1 (%), best epoch',
    'accuracy/top1': 'top-1 (%), final evaluation',
    'act_rate': 'activation rate',
    'gflops': 'GFLOPs per image',
    't_params': 'T-Params (M)',
    'i_params': 'I-Params (M)',
    'mIoU': 'mIoU (%)',
}
# Decimals shown: 2 for percentages (accuracy, mIoU), these others 3.
DECIMALS = {'act_rate': 3, 'gflops': 3, 't_params': 3, 'i_params': 3}
OUTPUT_FORMATS = ('table', 'markdown', 'csv')
FLOPS_FILE = 'flops.json'
PARAMS_LINE = re.compile(r'T-Params ([\d.]+)M, I-Params ([\d.]+)M')
# Shown in place of a number: a table cell whose runs are not all done, or
# that no run logged.
NOT_LOGGED = '-'
# Called with (file, line number) for a last line cut short (``run_records``).
OnCut = Optional[Callable[[str, int], None]]


class NothingToShowError(ValueError):
    """A work dir whose runs logged no evaluation, or a metric no run logged;
    the message names it and what there is."""


@dataclass(frozen=True)
class PaperResult:
    """A number a paper reports, as a metafile gives it (never one of ours)."""
    metric: str
    value: float
    dataset: str
    source: str


@dataclass(frozen=True)
class Block:
    """One table: its metric key ('' for several), title, header, rows of
    text and the paper's numbers beside them."""
    key: str
    title: str
    header: Tuple[str, ...]
    rows: Tuple[Tuple[str, ...], ...]
    paper: Tuple[str, ...] = ()


def evaluation_record(work_dir: str, on_cut: OnCut = None) -> Optional[dict]:
    """The newest evaluation (validation or test) record of ``work_dir``'s runs."""
    for run_dir in reversed(run_dirs(work_dir)):
        for record in reversed(run_records(run_dir, on_cut)):
            if is_validation(record):
                return record
    return None


def cell_results(work_dir: str, final: bool = True, on_cut: OnCut = None) -> dict:
    """The figures of the run(s) in ``work_dir``.

    Args:
        work_dir (str): A cell's work dir (or any run's).
        final (bool): Read the validation of the final step (a sweep's
            cell); False: the newest evaluation of any kind. Defaults to True.
        on_cut (Callable, optional): Called with (file, line number) of a
            record cut short (:func:`~mmvitdyn.sweeps.run_records.run_records`).

    Returns:
        dict: Logged key -> value, with ``gflops``, ``t_params``,
        ``i_params`` where they were logged; empty if nothing was.
    """
    record = None
    if final:
        step = final_step(work_dir)
        record = final_validation(work_dir, step[1], on_cut) if step else None
    else:
        record = evaluation_record(work_dir, on_cut)
    return {**(record or {}), **_counted(work_dir)}


def _counted(work_dir: str) -> dict:
    """``gflops``, ``t_params``, ``i_params`` of ``work_dir`` where they were logged."""
    results = {}
    flops = osp.join(work_dir, FLOPS_FILE)
    if osp.isfile(flops):
        with open(flops, 'rb') as f:
            data = f.read()
        try:
            text = data.decode('utf-8')
        except UnicodeDecodeError as err:
            raise DamagedRecordError(
                flops, f'is damaged: it is not UTF-8 text ({err}); expected the JSON that '
                'tools/analysis_tools/get_flops.py --out writes') from None
        counted = json_record(flops, text, 'its record').get('flops')
        if isinstance(counted, bool) or not isinstance(counted, (int, float)):
            raise DamagedRecordError(
                flops, f'has flops={counted!r}, not a number (as '
                'tools/analysis_tools/get_flops.py --out writes it)')
        results['gflops'] = counted / 1e9
    for run_dir in reversed(run_dirs(work_dir)):
        log = osp.join(run_dir, f'{osp.basename(run_dir)}.log')
        if not osp.isfile(log):
            continue
        with open(log, encoding='utf-8', errors='replace') as f:
            found = PARAMS_LINE.search(f.read())
        if found:
            results['t_params'], results['i_params'] = map(float, found.groups())
            break
    return results


def read_files(work_dir: str) -> List[str]:
    """The files of ``work_dir`` that :func:`cell_results` and
    :func:`~mmvitdyn.sweeps.cell_states.cell_state` read (those that exist and
    those that may): the outputs of a command that reads them must not be one."""
    files = [
        osp.join(work_dir, name) for name in (LOCK_NAME, 'last_checkpoint', EXIT_RECORD, FLOPS_FILE)
    ]
    for run_dir in run_dirs(work_dir):
        name = osp.basename(run_dir)
        files += [
            osp.join(run_dir, 'vis_data', 'config.py'),
            osp.join(run_dir, 'vis_data', 'scalars.json'),
            osp.join(run_dir, f'{name}.json'),
            osp.join(run_dir, f'{name}.log')
        ]
    return files


def paper_results(root: str) -> Dict[str, List[PaperResult]]:
    """Config path -> the paper-reported Results of ``configs/*/metafile.yml``
    (metrics whose name says "(paper)"), each with its ``Results Source``."""
    found = {}
    for path in sorted(glob(osp.join(root, 'configs', '*', 'metafile.yml'))):
        with open(path) as f:
            metafile = yaml.safe_load(f)
        for model in metafile.get('Models', []):
            for result in model.get('Results') or []:
                for metric, value in (result.get('Metrics') or {}).items():
                    if '(paper' in metric:
                        found.setdefault(model['Config'], []).append(
                            PaperResult(metric, value, result.get('Dataset', ''),
                                        model.get('Results Source', osp.relpath(path, root))))
    return found


def _text(value: Optional[float], metric: str) -> str:
    if value is None:
        return NOT_LOGGED
    return f'{value:.{DECIMALS.get(metric, 2)}f}'


def _entry(cells: Sequence[Cell], states: Dict[str, CellState], results: Dict[str, dict],
           metric: str) -> Tuple[str, Optional[float]]:
    """(text, value) of a table cell holding ``cells``: their state unless all are done."""
    if not cells:
        return '', None
    pending = [states[cell.name].state for cell in cells if states[cell.name].state != 'done']
    if pending:
        return min(pending, key=STATES.index), None
    values = [results[cell.name].get(metric) for cell in cells]
    if any(value is None for value in values):
        return NOT_LOGGED, None
    value = mean(values)
    return _text(value, metric), value


def _ordered(values) -> List[str]:
    return list(dict.fromkeys(values))


def _paper_lines(sweep: Sweep, paper: Dict[str, List[PaperResult]]) -> Tuple[str, ...]:
    """The paper's numbers of each cell that runs a metafile's config with no
    option but seeds, naming the cell's row/column and the source."""
    table, lines = sweep.table, []
    for cell in sweep.cells:
        changed = [
            option for axis, options in cell.axis_options.items() if axis not in table.seed_axes
            for option in options
        ]
        if changed or len(cell.options) != sum(map(len, cell.axis_options.values())):
            continue
        for result in paper.get(cell.config, []):
            where = ', '.join(cell.coords[name]
                              for name in table.rows + ((table.columns, ) if table.columns else ()))
            line = (f'{where}: {result.metric} {result.value} on {result.dataset} '
                    f'(source: {result.source})')
            if line not in lines:
                lines.append(line)
    return tuple(lines)


def build_blocks(sweep: Sweep, states: Dict[str, CellState], results: Dict[str, dict],
                 paper: Dict[str, List[PaperResult]]) -> List[Block]:
    """The sweep's table (:class:`~mmvitdyn.sweeps.sweep_file.Table`) as blocks of text.

    Args:
        sweep (Sweep): The sweep.
        states (dict): Cell name -> its state.
        results (dict): Cell name -> :func:`cell_results` (done cells).
        paper (dict): :func:`paper_results`.
    """
    table = sweep.table
    row_keys = _ordered(tuple(cell.coords[name] for name in table.rows) for cell in sweep.cells)

    def members(row, column=None):
        return [
            cell for cell in sweep.cells
            if tuple(cell.coords[name] for name in table.rows) == row and (
                column is None or cell.coords[table.columns] == column)
        ]

    notes = _paper_lines(sweep, paper)
    logged = {metric for result in results.values() for metric in result}
    metrics = [metric for metric in table.metrics if metric in logged] or list(table.metrics)
    if table.columns is None:
        header = (*table.rows, *(METRIC_NAMES.get(metric, metric) for metric in metrics))
        rows = [(*row, *(_entry(members(row), states, results, metric)[0] for metric in metrics))
                for row in row_keys]
        return [Block('', 'results', header, tuple(rows), notes)]
    grouped = [value for values in table.groups.values() for value in values]
    columns = grouped + [
        value for value in _ordered(cell.coords[table.columns]
                                    for cell in sweep.cells) if value not in grouped
    ]
    means = [f'{group} mean'
             for group in table.groups] + (['mean of groups'] if table.groups else [])
    blocks = []
    for metric in metrics:
        rows = []
        for row in row_keys:
            entries = {
                column: _entry(members(row, column), states, results, metric)
                for column in columns
            }
            group_means = []
            for values in table.groups.values():
                numbers = [entries[value][1] for value in values]
                group_means.append(None if None in numbers else mean(numbers))
            overall = None if None in group_means or not group_means else mean(group_means)
            summary = [_text(value, metric) for value in group_means
                       ] + ([_text(overall, metric)] if table.groups else [])
            rows.append((*row, *(entries[column][0] for column in columns), *summary))
        blocks.append(
            Block(metric, METRIC_NAMES.get(metric, metric), (*table.rows, *columns, *means),
                  tuple(rows), notes))
    return blocks


def _no_evaluation(label: str, work_dir: str) -> str:
    """Why the work dir ``label=work_dir`` gives no row: what each run holds."""
    where = f'work dir {label}={work_dir}'
    runs = run_dirs(work_dir)
    if not runs:
        return (f'{where} holds no run folder (<timestamp>/, as tools/train.py and tools/test.py '
                'make): nothing to show')
    held = []
    for run_dir in runs:
        path = record_file(run_dir)
        if path is None:
            name = osp.basename(run_dir)
            held.append(f'{run_dir} holds no vis_data/scalars.json or {name}.json')
            continue
        count = len(run_records(run_dir))
        held.append(f'{path} holds no records' if not count else
                    f'{path} holds {count} training record{"s" if count > 1 else ""} and no '
                    'validation or test record')
    return f'{where} holds no evaluation to show: ' + '; '.join(held)


def work_dir_blocks(work_dirs: Dict[str, str],
                    metrics: Optional[Sequence[str]] = None,
                    on_cut: OnCut = None) -> List[Block]:
    """One block: a row per labelled work dir, a column per metric (:func:`cell_results`
    of its newest evaluation).

    Args:
        work_dirs (dict): Label -> work dir.
        metrics (Sequence[str], optional): The logged keys to show; those no
            work dir logged are left out if :data:`METRIC_NAMES` knows them, else
            refused (a typo). Defaults to None: :data:`METRIC_NAMES`.
        on_cut (Callable, optional): See :func:`cell_results`.

    Raises:
        FileNotFoundError: A work dir that does not exist.
        DamagedRecordError: A record that cannot be read.
        NothingToShowError: A work dir whose runs logged no evaluation, or a
            metric of ``metrics`` that none logged, or no metric to show.
    """
    missing = [f'{label}={path}' for label, path in work_dirs.items() if not osp.isdir(path)]
    if missing:
        raise FileNotFoundError(f'work dirs {missing} do not exist')
    results = {}
    for label, path in work_dirs.items():
        record = evaluation_record(path, on_cut)
        if record is None:
            raise NothingToShowError(_no_evaluation(label, path))
        results[label] = {**record, **_counted(path)}  # as cell_results(path, final=False)
    logged = {key for result in results.values() for key in result}
    asked = list(METRIC_NAMES if metrics is None else metrics)
    metrics = [metric for metric in asked if metric in logged]
    unknown = [metric for metric in asked if metric not in logged and metric not in METRIC_NAMES]
    if unknown or not metrics:
        raise NothingToShowError(
            f'--metrics {unknown or asked} are logged by none of the work dirs; they log: '
            f"{sorted(logged - {'step'})}")
    header = ('run', *(METRIC_NAMES.get(metric, metric) for metric in metrics))
    rows = [(label, *(_text(result.get(metric), metric) for metric in metrics))
            for label, result in results.items()]
    return [Block('', 'results', header, tuple(rows))]


def _markdown_cell(text: str) -> str:
    """``text`` as a markdown table cell: its ``|`` (and ``\\``) escaped."""
    return text.replace('\\', '\\\\').replace('|', '\\|')


def format_blocks(blocks: Sequence[Block], fmt: str) -> str:
    """The blocks as an aligned text table, markdown or CSV (CSV: our numbers only).

    Raises:
        ValueError: If ``fmt`` is not one of :data:`OUTPUT_FORMATS`.
    """
    if fmt not in OUTPUT_FORMATS:
        raise ValueError(f'format={fmt!r} is not supported; allowed: {OUTPUT_FORMATS}')
    if fmt == 'csv':
        out = io.StringIO()
        writer = csv.writer(out, lineterminator='\n')
        several = len(blocks) > 1
        for index, block in enumerate(blocks):
            if index == 0:
                writer.writerow((('metric', ) if several else ()) + block.header)
            for row in block.rows:
                writer.writerow(((block.key, ) if several else ()) + row)
        return out.getvalue()
    parts = []
    for block in blocks:
        if fmt == 'markdown':
            parts.append(f'### {block.title}\n')
            parts += [
                '| ' + ' | '.join(map(_markdown_cell, row)) + ' |'
                for row in (block.header, ('---', ) * len(block.header), *block.rows)
            ]
        else:
            widths = [
                max(len(text) for text in column) for column in zip(block.header, *block.rows)
            ]
            parts.append(block.title)
            parts += [
                '  '.join(text.ljust(width) for text, width in zip(row, widths)).rstrip()
                for row in (block.header, *block.rows)
            ]
        parts.append('')
    if blocks and blocks[0].paper:
        parts.append("The papers' own numbers (from configs/*/metafile.yml, not runs of ours):")
        parts += [f'- {line}' for line in blocks[0].paper]
    return '\n'.join(parts).rstrip() + '\n'
