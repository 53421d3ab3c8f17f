"""Sweeps: a grid of training runs described by a sweep file (docs/sweeps.md).

Each run (a *cell*, named by its coordinates joined with ``_``) trains in
``<work_dir>/<name>``; :func:`cell_state` reads its state back from there.
"""
import codecs
import fcntl
import glob
import itertools
import json
import os
import os.path as osp
import re
import shlex
import subprocess
import threading
import time
from dataclasses import dataclass, field
from queue import Empty, Queue
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from mmengine.config import Config, DictAction

from ..utils import check_int, dump_json_atomically, remove_orphaned_temporaries
from ..utils.stored_configs import NotPlainDataError, parse_config_text
from ..utils.work_dir_lock import LOCK_NAME

SWEEP_FIELDS = ('configs', 'axes', 'options', 'work_dir', 'launcher', 'table')
LAUNCHER_FIELDS = {
    'local': ('type', 'max_parallel'),
    'pytorch': ('type', 'max_parallel', 'gpus', 'port'),
    'slurm':
    ('type', 'max_parallel', 'partition', 'gpus', 'gpus_per_node', 'cpus_per_task', 'srun_args'),
}
TABLE_FIELDS = ('rows', 'columns', 'groups', 'metrics', 'seed_axes')
CONFIG_COORDS = ('config', 'match')
STATES = ('done', 'running', 'failed', 'pending')
# What the sweep writes into a cell's work dir: the cell's output, and how it ended.
CELL_LOG = 'sweep.log'
EXIT_RECORD = 'sweep_exit.json'
RUN_DIR = re.compile(r'\d{8}_\d{6}$')
LABEL = re.compile(r'[A-Za-z0-9][A-Za-z0-9.+=-]*$')
# What a run's scalars file holds (said where one does not).
JSON_LINES = '; expected JSON lines (one JSON object a line) as mmengine writes them'


class SweepError(ValueError):
    """A sweep file that cannot be run, with the field, the value and what is allowed."""


@dataclass(frozen=True)
class Launcher:
    """How each cell is started (``tools/train.py``, ``dist_train.sh``, ``slurm_train.sh``).

    Args:
        type (str): 'local', 'pytorch' or 'slurm'.
        max_parallel (int): Cells run at once. Defaults to 1.
        gpus (int): Processes (GPUs) per cell ('pytorch', 'slurm'). Defaults to 8.
        port (int): torchrun's master port of the first slot; slot ``s``
            uses ``port + s`` ('pytorch'). Defaults to 29500.
        partition (str): Slurm partition ('slurm'). Defaults to ''.
        gpus_per_node (int): ``GPUS_PER_NODE`` ('slurm'). Defaults to 8.
        cpus_per_task (int): ``CPUS_PER_TASK`` ('slurm'). Defaults to 5.
        srun_args (str): ``SRUN_ARGS`` ('slurm'). Defaults to ''.
    """
    type: str = 'local'
    max_parallel: int = 1
    gpus: int = 8
    port: int = 29500
    partition: str = ''
    gpus_per_node: int = 8
    cpus_per_task: int = 5
    srun_args: str = ''


@dataclass(frozen=True)
class Cell:
    """One run of a sweep.

    Args:
        name (str): Unique in its sweep; the folder name of its work dir.
        config (str): The config file, as the sweep names it (relative to the root).
        coords (dict): Coordinate -> value label: ``config``, ``match`` and each axis.
        options (tuple[str]): ``--cfg-options`` (``key=value``): the sweep's, then each axis's.
        axis_options (dict): Axis -> the options its value adds.
        work_dir (str): Where it trains.
    """
    name: str
    config: str
    coords: Dict[str, str]
    options: Tuple[str, ...]
    axis_options: Dict[str, Tuple[str, ...]]
    work_dir: str


@dataclass(frozen=True)
class Table:
    """The layout of a sweep's results (see :mod:`mmvitdyn.analysis.sweep_results`).

    Args:
        rows (tuple[str]): Coordinates whose values make a row. Defaults to
            every axis.
        columns (str, optional): Coordinate whose values make the columns,
            one block per metric; None: one column per metric.
        groups (dict): Group name -> its column values, in order (e.g.
            VTAB-1K's Natural / Specialized / Structured); each group's mean
            and the mean of the group means follow the columns.
        metrics (tuple[str]): Logged keys (``accuracy/top1_best_epoch``, ...)
            and ``gflops``, ``t_params``, ``i_params``.
        seed_axes (tuple[str]): Axes that only repeat a run with another seed.
    """
    rows: Tuple[str, ...]
    columns: Optional[str] = None
    groups: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    metrics: Tuple[str, ...] = ('accuracy/top1', )
    seed_axes: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Sweep:
    """A loaded sweep file: its cells, launcher and table."""
    path: str
    work_dir: str
    cells: Tuple[Cell, ...]
    launcher: Launcher
    table: Table


@dataclass(frozen=True)
class CellState:
    """``state`` (one of :data:`STATES`) and what it rests on, e.g. 'epoch_2.pth'."""
    state: str
    detail: str


def parse_options(options: Sequence[str]) -> dict:
    """``key=value`` strings -> the dict ``--cfg-options`` makes of them
    (mmengine's ``DictAction``: ``None``, numbers, booleans, lists parsed)."""
    holder = type('Options', (), {})()
    DictAction(option_strings=[], dest='cfg_options')(None, holder, list(options))
    return holder.cfg_options


def _fail(field_name: str, value, allowed: str) -> None:
    raise SweepError(f'{field_name}={value!r}: {allowed}')


def _check_label(label, field_name: str) -> str:
    if not isinstance(label, str) or not LABEL.match(label):
        _fail(
            field_name, label, 'a label must start with a letter or digit and hold only '
            'letters, digits and . + = -')
    return label


def _options(value, field_name: str) -> Tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(
            isinstance(option, str) and '=' in option for option in value):
        _fail(field_name, value, "must be a list of 'key=value' strings, as --cfg-options takes")
    return tuple(value)


def expand_configs(configs, root: str) -> List[Tuple[Dict[str, str], str, List[str]]]:
    """(coordinates, config path, name parts) of each config of a sweep's ``configs``.

    Args:
        configs (str | list | dict): A path or glob, a list of them, or a
            dict label -> path or glob; relative to ``root``.
        root (str): The folder relative paths start from.

    Returns:
        list[tuple[dict, str, list]]: ``{'config': ..., 'match': ...}``, the
        path as the sweep names it and the parts of the cell names (the
        label, and what a dict entry's wildcards matched), in the sweep's
        order (a glob's files sorted).
    """
    if isinstance(configs, str):
        configs = [configs]
    if isinstance(configs, dict):
        entries = [(_check_label(key, 'configs key'), pattern) for key, pattern in configs.items()]
    elif isinstance(configs, (list, tuple)) and configs:
        entries = [(None, pattern) for pattern in configs]
    else:
        _fail(
            'configs', configs, 'must be a path or glob, a non-empty list of them, or a dict '
            'label -> path or glob')
    expanded = []
    for key, pattern in entries:
        if not isinstance(pattern, str) or not pattern.endswith('.py'):
            _fail(f'configs[{key or len(expanded)}]', pattern, 'must be a .py path or glob')
        regex = re.compile(''.join('(.*)' if part == '*' else re.escape(part)
                                   for part in re.split(r'(\*)', pattern)) + '$')
        paths = sorted((osp.relpath(path, root) if not osp.isabs(pattern) else path
                        for path in glob.glob(osp.join(root, pattern))),
                       key=_natural) if '*' in pattern else [pattern]
        if not paths or not osp.isfile(osp.join(root, paths[0])):
            _fail('configs', pattern, f'matches no config file under {root}')
        for path in paths:
            match = regex.match(path)
            if match is None or '' in match.groups():
                _fail(
                    'configs', pattern, f'matches {path} with a * that stands for nothing (the '
                    'cell names are made of what it matches); name that file without a *')
            text = '-'.join(match.groups()) if '*' in pattern else osp.splitext(
                osp.basename(path))[0]
            name = [key, text] if key is not None and '*' in pattern else [key or text]
            expanded.append(({'config': key or text, 'match': text}, path, name))
    return expanded


def _natural(text: str) -> list:
    """Sort key that orders numbers by value ('l6' before 'l10')."""
    return [(0, int(part), '') if part.isdigit() else (1, 0, part)
            for part in re.split(r'(\d+)', text)]


def _axes(axes) -> Dict[str, Dict[str, Tuple[str, ...]]]:
    if not isinstance(axes, dict):
        _fail('axes', axes, 'must be a dict: axis name -> dict(value label -> [options])')
    checked = {}
    for name, values in axes.items():
        _check_label(name, 'axes key')
        if name in CONFIG_COORDS:
            _fail('axes key', name, f'{CONFIG_COORDS} are the coordinates of the configs')
        if not isinstance(values, dict) or not values:
            _fail(f'axes.{name}', values, 'must be a non-empty dict: value label -> [options]')
        checked[name] = {
            _check_label(label, f'axes.{name} key'): _options(options, f'axes.{name}.{label}')
            for label, options in values.items()
        }
    return checked


def _launcher(cfg) -> Launcher:
    if not isinstance(cfg, dict) or cfg.get('type') not in LAUNCHER_FIELDS:
        _fail('launcher', cfg, f"must be a dict with type one of {sorted(LAUNCHER_FIELDS)}")
    unknown = sorted(set(cfg) - set(LAUNCHER_FIELDS[cfg['type']]))
    if unknown:
        _fail(f'launcher ({cfg["type"]})', unknown,
              f'unknown fields; allowed: {LAUNCHER_FIELDS[cfg["type"]]}')
    launcher = Launcher(**cfg)
    for name in ('max_parallel', 'gpus', 'port', 'gpus_per_node', 'cpus_per_task'):
        check_int(getattr(launcher, name), f'launcher.{name}', minimum=1)
    if launcher.type == 'slurm' and not launcher.partition:
        _fail('launcher.partition', launcher.partition, 'the slurm launcher needs a partition')
    return launcher


def _table(cfg, coords: Sequence[str], axes: Sequence[str]) -> Table:
    if not isinstance(cfg, dict):
        _fail('table', cfg, 'must be a dict')
    unknown = sorted(set(cfg) - set(TABLE_FIELDS))
    if unknown:
        _fail('table', unknown, f'unknown fields; allowed: {TABLE_FIELDS}')
    rows = cfg.get('rows', list(axes) or ['config'])
    rows = [rows] if isinstance(rows, str) else rows
    for name in [*rows, *([cfg['columns']] if cfg.get('columns') is not None else [])]:
        if name not in coords:
            _fail('table.rows/columns', name, f'must be one of the coordinates {list(coords)}')
    groups = cfg.get('groups', {})
    if groups and cfg.get('columns') is None:
        _fail('table.groups', groups, 'group the values of table.columns; set columns')
    seed_axes = tuple(cfg.get('seed_axes', ()))
    for name in seed_axes:
        if name not in axes:
            _fail('table.seed_axes', name, f'must be among the axes {list(axes)}')
    metrics = cfg.get('metrics', ['accuracy/top1'])
    if isinstance(metrics, str) or not metrics:
        _fail('table.metrics', metrics, 'must be a non-empty list of logged keys')
    return Table(
        rows=tuple(rows),
        columns=cfg.get('columns'),
        groups={
            name: tuple(values)
            for name, values in groups.items()
        },
        metrics=tuple(metrics),
        seed_axes=seed_axes)


def load_sweep(path: str, root: str, max_parallel: Optional[int] = None) -> Sweep:
    """Read and check a sweep file and expand its cells.

    Args:
        path (str): The sweep file.
        root (str): The folder its config paths are relative to (the repository).
        max_parallel (int, optional): Overrides ``launcher.max_parallel``.

    Raises:
        SweepError: Naming the field, its value and what is allowed.
    """
    if not osp.isfile(path):
        raise SweepError(f'sweep file {path!r} does not exist (ready-made ones: configs/sweeps/)')
    cfg = {
        key: value
        for key, value in Config.fromfile(path).to_dict().items() if not key.startswith('_')
    }
    unknown = sorted(set(cfg) - set(SWEEP_FIELDS))
    if unknown:
        _fail(path, unknown, f'unknown fields; a sweep file sets {SWEEP_FIELDS} (and helpers '
              "named '_...')")
    if 'configs' not in cfg:
        _fail(path, sorted(cfg), 'a sweep file must set configs')
    configs = expand_configs(cfg['configs'], root)
    axes = _axes(cfg.get('axes', {}))
    common = _options(cfg.get('options', []), 'options')
    launcher_cfg = dict(cfg.get('launcher', dict(type='local')))
    if max_parallel is not None:
        launcher_cfg['max_parallel'] = max_parallel
    launcher = _launcher(launcher_cfg)
    table = _table(cfg.get('table', {}), [*CONFIG_COORDS, *axes], list(axes))
    work_dir = cfg.get('work_dir') or osp.join('work_dirs', 'sweeps',
                                               osp.splitext(osp.basename(path))[0])
    cells = []
    for (coords, config, parts), values in itertools.product(
            configs, itertools.product(*[list(values.items()) for values in axes.values()])):
        name = '_'.join(parts + [label for label, _ in values])
        axis_options = {axis: options for axis, (_, options) in zip(axes, values)}
        cells.append(
            Cell(
                name=name,
                config=config,
                coords={
                    **coords,
                    **{
                        axis: label
                        for axis, (label, _) in zip(axes, values)
                    }
                },
                options=common + tuple(itertools.chain(*axis_options.values())),
                axis_options=axis_options,
                work_dir=osp.join(work_dir, name)))
    names = [cell.name for cell in cells]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        _fail('configs/axes', repeated, 'cells need distinct names: give configs as a dict of '
              'distinct labels')
    values = {cell.coords[table.columns] for cell in cells} if table.columns else set()
    for group, members in table.groups.items():
        missing = [value for value in members if value not in values]
        if missing:
            _fail(f'table.groups.{group}', missing,
                  f'not values of table.columns={table.columns!r}: {sorted(values)}')
    return Sweep(path, work_dir, tuple(cells), launcher, table)


def unknown_option_keys(cell: Cell, root: str) -> List[str]:
    """Load the cell's config, apply its options (``merge_from_dict``, as
    ``tools/train.py`` does) and return the option keys the config did not
    have (a typo makes a new key, which no model reads)."""
    cfg = Config.fromfile(osp.join(root, cell.config))
    unknown = []
    for key in parse_options(cell.options):
        node = cfg.to_dict()
        for part in key.split('.'):
            if isinstance(node, (list, tuple)) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                unknown.append(key)
                break
    cfg.merge_from_dict(parse_options(cell.options))
    return unknown


def cell_command(cell: Cell, launcher: Launcher, root: str, python: str,
                 resume: bool) -> Tuple[List[str], Dict[str, str]]:
    """The command that trains ``cell`` and the variables it sets.

    ``tools/train.py``, ``tools/dist_train.sh`` or ``tools/slurm_train.sh`` as
    ``launcher.type`` says (docs/sweeps.md), then ``--cfg-options`` and, with
    ``resume``, ``--resume``; paths relative to the working directory where they
    lie under it.
    """
    tools = _short(osp.join(root, 'tools'))
    config = _short(osp.join(root, cell.config))
    extra = (['--cfg-options', *cell.options] if cell.options else []) + (['--resume']
                                                                          if resume else [])
    if launcher.type == 'local':
        return [python,
                osp.join(tools, 'train.py'), config, '--work-dir', cell.work_dir, *extra], {}
    if launcher.type == 'pytorch':
        return [
            'bash',
            osp.join(tools, 'dist_train.sh'), config,
            str(launcher.gpus), '--work-dir', cell.work_dir, *extra
        ], {}
    env = dict(
        GPUS=str(launcher.gpus),
        GPUS_PER_NODE=str(launcher.gpus_per_node),
        CPUS_PER_TASK=str(launcher.cpus_per_task),
        SRUN_ARGS=launcher.srun_args)
    return [
        'bash',
        osp.join(tools, 'slurm_train.sh'), launcher.partition, cell.name, config, cell.work_dir,
        *extra
    ], env


def slot_env(launcher: Launcher, slot: int) -> Dict[str, str]:
    """Variables of the ``slot``-th of the ``max_parallel`` cells running at
    once: under 'pytorch', its own master ``PORT`` and, when several run at
    once, its own ``gpus`` GPUs (``CUDA_VISIBLE_DEVICES``)."""
    if launcher.type != 'pytorch':
        return {}
    env = dict(PORT=str(launcher.port + slot))
    if launcher.max_parallel > 1:
        first = slot * launcher.gpus
        env['CUDA_VISIBLE_DEVICES'] = ','.join(map(str, range(first, first + launcher.gpus)))
    return env


def shell_line(argv: Sequence[str], env: Dict[str, str]) -> str:
    """``argv`` with ``env`` as a line a shell runs as typed."""
    return ' '.join([f'{key}={shlex.quote(value)}'
                     for key, value in env.items()] + [shlex.quote(arg) for arg in argv])


def _short(path: str) -> str:
    relative = osp.relpath(path)
    return path if relative.startswith('..') else relative


class DamagedRecordError(ValueError):
    """A record a run or the sweep wrote that cannot be read (cut short by a
    killed process or a full disk, or edited); the message names the file
    and what to do."""

    def __init__(self, path: str, problem: str):
        super().__init__(f'{path} {problem}: remove it (or its run folder) and run the cell '
                         'again (tools/sweep.py SWEEP --resume)')
        self.path = path
        self.problem = problem


def json_record(path: str, text: str, where: str, expected: str = '') -> dict:
    """One JSON object of the record file ``path`` (``where`` names its place;
    ``expected``, if given, says what the file should hold)."""
    try:
        record = json.loads(text)
    except ValueError as err:
        raise DamagedRecordError(path,
                                 f'is damaged: {where} is not JSON ({err}){expected}') from None
    if not isinstance(record, dict):
        raise DamagedRecordError(path, f'is damaged: {where} is not a JSON object{expected}')
    return record


def run_dirs(work_dir: str) -> List[str]:
    """The timestamped run folders mmengine made in ``work_dir``, oldest first."""
    if not osp.isdir(work_dir):
        return []
    return [
        osp.join(work_dir, name) for name in sorted(os.listdir(work_dir))
        if RUN_DIR.match(name) and osp.isdir(osp.join(work_dir, name))
    ]


def record_file(run_dir: str) -> Optional[str]:
    """The file of a run's logged scalars: a training run's
    ``vis_data/scalars.json``, else a test run's ``<timestamp>.json``; None
    when it has neither."""
    name = osp.basename(run_dir)
    for path in (osp.join(run_dir, 'vis_data', 'scalars.json'), osp.join(run_dir, f'{name}.json')):
        if osp.isfile(path):
            return path
    return None


def _cut_line(line: bytes) -> bool:
    """Whether a last line without its newline can be the start of a JSON
    object that was being written (or cut by a kill): UTF-8 text (perhaps cut
    inside a character) beginning with ``{``."""
    try:
        text = codecs.getincrementaldecoder('utf-8')().decode(line, final=False)
    except UnicodeDecodeError:
        return False
    return text.lstrip().startswith('{')


def run_records(run_dir: str, on_cut: Optional[Callable[[str, int], None]] = None) -> List[dict]:
    """The scalars a run logged, in order (:func:`record_file`; mmengine
    writes one JSON object a line, a test run's one line without a newline).
    A last line without its newline that begins a JSON object but is not one
    is being written, or was cut by a kill: it is no record (``on_cut(path,
    line number)`` is called). Any other line that is not a JSON object, or
    not UTF-8 text, raises :class:`DamagedRecordError` naming the line."""
    path = record_file(run_dir)
    if path is None:
        return []
    with open(path, 'rb') as f:
        *lines, last = f.read().split(b'\n')
    records = []
    for number, line in enumerate(lines + [last], 1):
        try:
            text = line.decode('utf-8')
            if text.strip():
                records.append(json_record(path, text, f'line {number}', JSON_LINES))
        except (UnicodeDecodeError, DamagedRecordError) as err:
            if number <= len(lines) or not _cut_line(line):
                if isinstance(err, UnicodeDecodeError):
                    raise DamagedRecordError(
                        path, f'is damaged: line {number} is not UTF-8 text ({err}){JSON_LINES}'
                    ) from None
                raise
            if on_cut is not None:
                on_cut(path, number)
    return records


def is_validation(record: dict) -> bool:
    """Whether a logged record holds evaluation metrics (training records carry ``iter``)."""
    return 'iter' not in record


def final_step(work_dir: str) -> Optional[Tuple[str, int, bool]]:
    """(unit, last step, validates) of the newest run's dumped config:
    ('epoch', max_epochs) or ('iter', max_iters); None without a dumped config."""
    for run_dir in reversed(run_dirs(work_dir)):
        path = osp.join(run_dir, 'vis_data', 'config.py')
        if osp.isfile(path):
            with open(path) as f:
                text = f.read()
            try:
                cfg = parse_config_text(text, names=('train_cfg', 'val_dataloader', 'val_cfg'))
            except NotPlainDataError as err:
                raise DamagedRecordError(path, f'is not a config dumped as plain data ({err})')
            train_cfg = cfg.get('train_cfg') or {}
            validates = bool(cfg.get('val_dataloader')) and cfg.get('val_cfg') is not None
            if 'max_epochs' in train_cfg:
                return 'epoch', train_cfg['max_epochs'], validates
            return 'iter', train_cfg.get('max_iters'), validates
    return None


def final_validation(work_dir: str,
                     step: int,
                     on_cut: Optional[Callable[[str, int], None]] = None) -> Optional[dict]:
    """The validation record logged at ``step``, from the newest run that has
    one (``on_cut``: :func:`run_records`')."""
    for run_dir in reversed(run_dirs(work_dir)):
        for record in reversed(run_records(run_dir, on_cut)):
            if is_validation(record) and record.get('step') == step:
                return record
    return None


def lock_holder(work_dir: str) -> Optional[str]:
    """Who holds ``work_dir``'s lock (pid, host), or None when no live process does."""
    path = osp.join(work_dir, LOCK_NAME)
    if not osp.isfile(path):
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        text = os.read(fd, 4096).decode('utf-8', 'replace')
        try:
            holder = json.loads(text)
            return f"pid {holder['pid']} on {holder['host']}"
        except (ValueError, KeyError):
            return 'holder unknown'
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def exit_record(work_dir: str) -> Optional[dict]:
    """How the sweep's last launch of the cell ended, if it recorded it."""
    path = osp.join(work_dir, EXIT_RECORD)
    if not osp.isfile(path):
        return None
    with open(path) as f:
        return json_record(path, f.read(), 'its record')


def cell_state(work_dir: str) -> CellState:
    """The state of the cell that trains in ``work_dir`` (one of :data:`STATES`, as
    docs/sweeps.md defines them); a cell with a damaged record is 'failed', the
    detail naming it."""
    holder = lock_holder(work_dir)
    if holder is not None:
        return CellState('running', holder)
    try:
        return _recorded_state(work_dir)
    except DamagedRecordError as err:
        return CellState('failed', str(err))


def _recorded_state(work_dir: str) -> CellState:
    """The state of a cell no process holds, from its records."""
    checkpoint = None
    if osp.isfile(osp.join(work_dir, 'last_checkpoint')):
        with open(osp.join(work_dir, 'last_checkpoint')) as f:
            checkpoint = osp.basename(f.read().strip())
    final = final_step(work_dir)
    if final is not None and checkpoint == f'{final[0]}_{final[1]}.pth':
        if not final[2] or final_validation(work_dir, final[1]) is not None:
            return CellState('done', checkpoint)
    ended = exit_record(work_dir)
    if ended is None and checkpoint is None and not run_dirs(work_dir):
        return CellState('pending', 'not started')
    reached = checkpoint or 'no checkpoint'
    if final is not None and checkpoint == f'{final[0]}_{final[1]}.pth':
        reached += ', final validation not logged'
    if ended is None:
        return CellState('failed', f'stopped at {reached}')
    return CellState(
        'failed',
        f"exit code {ended.get('returncode', '(not recorded)')} at {reached}; its output: "
        f'{osp.join(work_dir, CELL_LOG)}')


def run_cells(cells: Sequence[Cell],
              launcher: Launcher,
              command: Callable[[Cell], Tuple[List[str], Dict[str, str]]],
              report: Callable[[str, Cell, str], None],
              env: Optional[Dict[str, str]] = None) -> Dict[str, int]:
    """Run ``cells``, ``launcher.max_parallel`` at a time, each in its own process group.

    A cell's output goes to ``<work_dir>/sweep.log``, how it ended to
    ``<work_dir>/sweep_exit.json``; the temporary files of saves it did not finish
    are removed when it ends. A ``KeyboardInterrupt`` (or a SIGTERM the tool turns
    into one) stops the running cells (SIGTERM to their process groups), records
    them, starts no more and is raised again.

    Args:
        cells (Sequence[Cell]): The cells to run, in order.
        launcher (Launcher): Its ``max_parallel`` and slot variables.
        command (Callable): Cell -> (argv, variables).
        report (Callable): Called with ('start' | 'end', cell, text).
        env (dict, optional): The environment of the cells. Defaults to
            None (this process's).

    Returns:
        dict: Cell name -> exit code, for the cells that ended.
    """
    todo, codes, lock = Queue(), {}, threading.Lock()
    running: Dict[str, subprocess.Popen] = {}
    stop = threading.Event()
    for cell in cells:
        todo.put(cell)

    def run_queue(slot: int) -> None:
        while not stop.is_set():
            try:
                cell = todo.get_nowait()
            except Empty:
                return
            argv, variables = command(cell)
            variables = {**variables, **slot_env(launcher, slot)}
            with lock:
                if stop.is_set():
                    return
                os.makedirs(cell.work_dir, exist_ok=True)
                if osp.isfile(osp.join(cell.work_dir, EXIT_RECORD)):
                    os.remove(osp.join(cell.work_dir, EXIT_RECORD))
                report('start', cell, shell_line(argv, variables))
                started = time.time()
                with open(osp.join(cell.work_dir, CELL_LOG), 'w') as log:
                    proc = subprocess.Popen(
                        argv,
                        env={
                            **(os.environ if env is None else env),
                            **variables
                        },
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True)
                running[cell.name] = proc
            code = proc.wait()
            with lock:
                del running[cell.name]
                codes[cell.name] = code
                dump_json_atomically(
                    dict(returncode=code, seconds=round(time.time() - started, 1), argv=argv),
                    osp.join(cell.work_dir, EXIT_RECORD))
                removed = remove_orphaned_temporaries(cell.work_dir)
                report(
                    'end', cell, f'exit code {code}, {time.time() - started:.0f} s' +
                    ''.join(f'; removed {path.name}, a save it did not finish' for path in removed))

    workers = [
        threading.Thread(target=run_queue, args=(slot, ), daemon=True)
        for slot in range(launcher.max_parallel)
    ]

    def wait_for_workers() -> None:
        # Polled with sleep: a KeyboardInterrupt inside Thread.join can leave
        # the thread looking finished while it still waits for its cell.
        while any(worker.is_alive() for worker in workers):
            time.sleep(0.1)

    try:  # from the first start: an interrupt right after a launch stops it too
        for worker in workers:
            worker.start()
        wait_for_workers()
    except KeyboardInterrupt:
        stop.set()
        with lock:
            for proc in running.values():
                _stop_group(proc)
        wait_for_workers()
        raise
    return codes


def _stop_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, 15)
    except ProcessLookupError:
        pass
