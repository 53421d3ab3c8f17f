"""A sweep file: a grid of training runs (*cells*) over configs and ``--cfg-options`` axes.

Each cell, named by its coordinates joined with ``_``, trains in
``<work_dir>/<name>`` (docs/sweeps.md).
"""
import glob
import itertools
import os.path as osp
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from mmengine.config import Config, DictAction

from ..utils import check_int

SWEEP_FIELDS = ('configs', 'axes', 'options', 'work_dir', 'launcher', 'table')
LAUNCHER_FIELDS = {
    'local': ('type', 'max_parallel'),
    'pytorch': ('type', 'max_parallel', 'gpus', 'port'),
    'slurm':
    ('type', 'max_parallel', 'partition', 'gpus', 'gpus_per_node', 'cpus_per_task', 'srun_args'),
}
TABLE_FIELDS = ('rows', 'columns', 'groups', 'metrics', 'seed_axes')
CONFIG_COORDS = ('config', 'match')
LABEL = re.compile(r'[A-Za-z0-9][A-Za-z0-9.+=-]*$')


class SweepError(ValueError):
    """A sweep file that cannot be run, with the field, the value and what is allowed."""


@dataclass(frozen=True)
class Launcher:
    """How each cell is started (``tools/train.py``, ``dist_train.sh``, ``slurm_train.sh``).

    Args:
        type (str): 'local', 'pytorch' or 'slurm'.
        max_parallel (int): Cells run at once. Defaults to 1.
        gpus (int): Processes (GPUs) per cell ('pytorch', 'slurm'). Defaults to 8.
        port (int): Slot ``s``'s master port is ``port + s`` ('pytorch'). Defaults to 29500.
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
    """The layout of a sweep's results (see :mod:`mmvitdyn.sweeps.results`).

    Args:
        rows (tuple[str]): Coordinates whose values make a row (every axis).
        columns (str, optional): Coordinate whose values make the columns.
        groups (dict): Group name -> its column values, averaged after them.
        metrics (tuple[str]): Logged keys, ``gflops``, ``t_params``, ``i_params``.
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
        path as the sweep names it and the cell-name parts (label, what the
        wildcards matched), in order (a glob's files sorted).
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


def _axis_options(value, field_name: str):
    """An axis value's options: a list, or a dict config label -> list (each
    config's own, e.g. where image and video configs nest a setting differently)."""
    if isinstance(value, dict):
        return {
            _check_label(label, f'{field_name} key'): _options(options, f'{field_name}.{label}')
            for label, options in value.items()
        }
    return _options(value, field_name)


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
            _check_label(label, f'axes.{name} key'): _axis_options(options, f'axes.{name}.{label}')
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
    labels = sorted({coords['config'] for coords, _, _ in configs})
    for name, values in axes.items():
        for label, options in values.items():
            if isinstance(options, dict) and sorted(options) != labels:
                _fail(f'axes.{name}.{label}', sorted(options),
                      f'per-config options need one list for each config label: {labels}')
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
        axis_options = {
            axis: options[coords['config']] if isinstance(options, dict) else options
            for axis, (_, options) in zip(axes, values)
        }
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
