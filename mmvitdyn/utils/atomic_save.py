"""Writing checkpoints and artefacts so that no half-written file is ever visible.

Each file is written to a temporary sibling, flushed to disk (``fsync``),
renamed over the destination and the rename flushed (``fsync`` of the
directory): after a crash or a power cut the destination holds either the
old content or the complete new one.
"""
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import torch
from mmengine.fileio import LocalBackend, register_backend

ATOMIC_BACKEND = 'atomic_local'


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
    tmp = dst.with_name(f'.{dst.name}.tmp-{os.getpid()}')
    try:
        yield tmp
        fsync_path(tmp)
        os.replace(tmp, dst)
        fsync_path(dst.parent)
    finally:
        tmp.unlink(missing_ok=True)


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
