"""Reading back what a run logged in its work dir: run folders, scalars, the dumped config."""
import codecs
import json
import os
import os.path as osp
import re
from typing import Callable, List, Optional, Tuple

from ..checkpoint.stored_configs import NotPlainDataError, parse_config_text

RUN_DIR = re.compile(r'\d{8}_\d{6}$')
# What a run's scalars file holds (said where one does not).
JSON_LINES = '; expected JSON lines (one JSON object a line) as mmengine writes them'


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
