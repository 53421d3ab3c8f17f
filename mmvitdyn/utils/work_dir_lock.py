"""One training run per work_dir: an advisory lock that names its holder.

:class:`WorkDirLock` holds an exclusive ``flock`` on ``<work_dir>/.mmvitdyn.lock``,
which records the holder (pid, host, start time, command); within one process
the lock is counted (docs/design_notes.md).
"""
import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Dict

LOCK_NAME = '.mmvitdyn.lock'
# Real path of a lock file -> [fd, holds] for the locks this process holds.
_HELD: Dict[str, list] = {}


class WorkDirLockedError(RuntimeError):
    """Another live process holds the work_dir."""


class WorkDirLock:
    """Exclusive hold of ``work_dir`` while this object is acquired.

    Args:
        work_dir (str): The folder (created if missing).
    """

    def __init__(self, work_dir: str):
        self.path = Path(work_dir) / LOCK_NAME
        self.held = False

    def acquire(self) -> None:
        """Take the lock, or raise :class:`WorkDirLockedError` naming its holder."""
        if self.held:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        key = os.path.realpath(self.path)
        if key in _HELD:
            _HELD[key][1] += 1
            self.held = True
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 4096).decode('utf-8', 'replace').strip() or 'holder unknown'
            os.close(fd)
            raise WorkDirLockedError(
                f'{self.path.parent} is in use by another run ({holder}); wait for it '
                'to end, stop it, or pass another --work-dir') from None
        os.ftruncate(fd, 0)
        holder = dict(
            pid=os.getpid(),
            host=socket.gethostname(),
            started=time.strftime('%Y-%m-%d %H:%M:%S'),
            command=' '.join(sys.argv))
        os.write(fd, json.dumps(holder).encode())
        os.fsync(fd)
        _HELD[key] = [fd, 1]
        self.held = True

    def release(self) -> None:
        """Let go of the lock (the file stays, meaningless once unlocked)."""
        if not self.held:
            return
        self.held = False
        key = os.path.realpath(self.path)
        entry = _HELD[key]
        entry[1] -= 1
        if entry[1] == 0:
            del _HELD[key]
            fcntl.flock(entry[0], fcntl.LOCK_UN)
            os.close(entry[0])

    def __enter__(self) -> 'WorkDirLock':
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
