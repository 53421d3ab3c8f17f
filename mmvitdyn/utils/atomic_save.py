"""Writing every output file through a temporary sibling, ``fsync`` and rename,
refusing an output that is one of the writer's inputs (docs/design_notes.md)."""
import json
import os
import re
import socket
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, List

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


class OutputIsInputError(ValueError):
    """An output path names a file the command reads."""


def refuse_overwriting_inputs(dst, inputs: Iterable) -> None:
    """Raise :class:`OutputIsInputError` if ``dst`` is one of ``inputs``
    (the same file; links followed) or lies in an input folder (a folder a
    data set scans), whether or not ``dst`` exists yet. The working
    directory and the folders above it never count as input folders; URLs
    and missing inputs are skipped."""
    target = Path(os.path.realpath(dst))
    out = _file_key(target)
    folders = {_file_key(folder): folder for folder in target.parents}
    cwd = Path(os.path.realpath(os.getcwd()))
    for above in (cwd, *cwd.parents):
        folders.pop(_file_key(above), None)
    for src in inputs:
        try:
            read = os.stat(src)
        except (OSError, ValueError, TypeError):
            continue
        key = (read.st_dev, read.st_ino)
        if key == out or (stat.S_ISDIR(read.st_mode) and key in folders):
            where = 'is the input' if key == out else 'lies in the input folder'
            raise OutputIsInputError(
                f'output {os.fspath(dst)} {where} {os.fspath(src)}: writing it would '
                'destroy what this command reads; choose another output path')


def _file_key(path: Path):
    """(device, inode) of ``path``, or None if it does not exist."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


@contextmanager
def atomic_target(dst: str, inputs: Iterable = ()) -> Iterator[Path]:
    """Yield a temporary sibling of ``dst`` to write; on success flush it to
    disk and rename it into place; on failure remove it, leaving ``dst`` as it was.

    Raises:
        OutputIsInputError: ``dst`` is one of ``inputs`` (checked first).
    """
    refuse_overwriting_inputs(dst, inputs)
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


def save_atomically(obj: dict, dst: str, inputs: Iterable = ()) -> None:
    """``torch.save`` ``obj`` to ``dst`` through a temporary file (not over ``inputs``)."""
    with atomic_target(dst, inputs) as tmp:
        torch.save(obj, tmp)


def write_text_atomically(text: str, dst: str, inputs: Iterable = ()) -> None:
    """Write ``text`` to ``dst`` through a temporary file (not over ``inputs``)."""
    with atomic_target(dst, inputs) as tmp:
        tmp.write_text(text)


def save_figure_atomically(figure, dst: str, inputs: Iterable = (), **savefig_kwargs) -> None:
    """``figure.savefig`` (a matplotlib figure) to ``dst`` through a temporary
    file, in the format its suffix names (not over ``inputs``)."""
    with atomic_target(dst, inputs) as tmp:
        figure.savefig(tmp, format=Path(dst).suffix[1:] or 'png', **savefig_kwargs)


def dump_json_atomically(obj, dst: str, inputs: Iterable = ()) -> None:
    """Write ``obj`` as indented JSON to ``dst`` through a temporary file (not over ``inputs``)."""
    write_text_atomically(json.dumps(obj, indent=2) + '\n', dst, inputs)


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
