"""Writing checkpoints and artefacts so that no half-written file is ever visible.

Each file is written to a temporary sibling, flushed to disk (``fsync``),
renamed over the destination and the rename flushed (``fsync`` of the
directory): after a crash or a power cut the destination holds either the
old content or the complete new one.
"""
import json
import os
import re
import socket
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, List

import torch
from mmengine.fileio import LocalBackend, register_backend

ATOMIC_BACKEND = 'atomic_local'
# ``.<name>.tmp-<host>-<pid>``: the temporary sibling :func:`atomic_target` writes.
TEMPORARY_NAME = re.compile(r'^\..+\.tmp-(.+)-(\d+)$')
HOST = socket.gethostname()


def fsync_path(path: Path) -> None:
    """Flush a file's (or a directory's entries') written data to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_target(dst: str) -> Iterator[Path]:
    """Yield a temporary sibling of ``dst`` to write; on success flush it to
    disk and rename it into place; on failure remove it, leaving ``dst`` as it was."""
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(f'.{dst.name}.tmp-{HOST}-{os.getpid()}')  # TEMPORARY_NAME
    try:
        yield tmp
        fsync_path(tmp)
        os.replace(tmp, dst)
        fsync_path(dst.parent)
    finally:
        tmp.unlink(missing_ok=True)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def remove_orphaned_temporaries(directory: str) -> List[Path]:
    """Remove the temporary files that saves killed before their rename left
    in ``directory``: those of processes of this host no longer running (a
    shared folder's files of other hosts stay); returns them."""
    removed = []
    for path in Path(directory).glob('.*.tmp-*'):
        match = TEMPORARY_NAME.match(path.name)
        if (match and match.group(1) == HOST and path.is_file()
                and not _process_alive(int(match.group(2)))):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def save_atomically(obj: dict, dst: str) -> None:
    """``torch.save`` ``obj`` to ``dst`` through a temporary file."""
    with atomic_target(dst) as tmp:
        torch.save(obj, tmp)


def dump_json_atomically(obj, dst: str) -> None:
    """Write ``obj`` as indented JSON to ``dst`` through a temporary file."""
    with atomic_target(dst) as tmp:
        tmp.write_text(json.dumps(obj, indent=2) + '\n')


@register_backend(ATOMIC_BACKEND)
class AtomicLocalBackend(LocalBackend):
    """mmengine's local file backend, writing through :func:`atomic_target`.

    Select it with ``backend_args=dict(backend='atomic_local')`` (e.g. of a
    ``CheckpointHook``); reading, listing and removing are ``LocalBackend``'s.
    """

    def put(self, obj: bytes, filepath) -> None:
        with atomic_target(filepath) as tmp:
            tmp.write_bytes(obj)

    def put_text(self, obj: str, filepath, encoding: str = 'utf-8') -> None:
        with atomic_target(filepath) as tmp:
            tmp.write_text(obj, encoding=encoding)
