"""A cell's state (done, running, failed, pending), read from its work dir."""
import fcntl
import json
import os
import os.path as osp
from dataclasses import dataclass
from typing import Optional

from ..utils.work_dir_lock import LOCK_NAME
from .launch import CELL_LOG, EXIT_RECORD
from .run_records import DamagedRecordError, final_step, final_validation, json_record, run_dirs

STATES = ('done', 'running', 'failed', 'pending')


@dataclass(frozen=True)
class CellState:
    """``state`` (one of :data:`STATES`) and what it rests on, e.g. 'epoch_2.pth'."""
    state: str
    detail: str


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
