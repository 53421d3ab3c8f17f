"""Which checkpoints the user vouched for: the opt-in to full unpickling, for
named files (:func:`trusted_checkpoints`) or every file (the environment; see
docs/checkpoints.md)."""
import os
import os.path as osp
from contextlib import contextmanager
from contextvars import ContextVar
from typing import FrozenSet, Iterable, Iterator, List, Optional, Sequence, Union

from ..settings import trust_all_checkpoints

TRUST_FLAG = '--trust-checkpoint'

# A trusted checkpoint: a URL or scheme name as written, or a local file's :func:`file_key`.
TrustKey = Union[str, tuple]
_TRUSTED: ContextVar[FrozenSet[TrustKey]] = ContextVar(
    'mmvitdyn_trusted_checkpoints', default=frozenset())


def _forget_in_child() -> None:
    _TRUSTED.set(frozenset())


os.register_at_fork(after_in_child=_forget_in_child)


def is_local_path(name) -> bool:
    """Whether a checkpoint name is a local path (not a URL or ``scheme://`` name)."""
    return '://' not in os.fspath(name)


def file_key(stat: os.stat_result) -> tuple:
    """How a local file is trusted: device, inode, size, modification and change times."""
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def checkpoint_key(name) -> Optional[TrustKey]:
    """How a checkpoint is identified: a URL or ``scheme://`` name as written,
    a local path by the file it names now (None if there is none)."""
    name = os.fspath(name)
    if not is_local_path(name):
        return name
    try:
        return file_key(os.stat(osp.expanduser(name)))
    except OSError:
        return None


def is_trusted(*names, opened: Optional[os.stat_result] = None) -> bool:
    """Whether the user vouched for a checkpoint known by any of ``names``
    (URLs and scheme names; local paths as they are now) or for the open
    file whose ``os.fstat`` is ``opened``."""
    if trust_all_checkpoints():
        return True
    trusted = _TRUSTED.get()
    keys = {checkpoint_key(name) for name in names if name is not None}
    if opened is not None:
        keys.add(file_key(opened))
    return bool(keys & trusted)


def trusted_names(option: Optional[List[str]], own: Sequence[Optional[str]]) -> List[str]:
    """The checkpoints a command's ``--trust-checkpoint`` value trusts: its PATHs;
    without PATHs (``[]``) the command's own checkpoint arguments ``own`` (None
    entries skipped; ValueError if there are none); nothing when it is absent (None)."""
    if option != []:
        return list(option or [])
    names = [name for name in own if name]
    if not names:
        raise ValueError(f'{TRUST_FLAG} without PATHs trusts the checkpoint arguments of the '
                         f'command, and this one has none; name the files: {TRUST_FLAG} PATH ...')
    return names


@contextmanager
def trusted_checkpoints(names: Iterable) -> Iterator[None]:
    """Trust the checkpoints ``names`` (paths or URLs) inside the block."""
    keys = {checkpoint_key(name) for name in names} - {None}
    token = _TRUSTED.set(_TRUSTED.get() | keys)
    try:
        yield
    finally:
        _TRUSTED.reset(token)
