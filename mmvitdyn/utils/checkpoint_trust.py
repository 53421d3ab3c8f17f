"""Which checkpoints the user vouched for: the opt-in to full unpickling.

:func:`trusted_checkpoints` trusts named files for the code inside it, in this
thread and context only (the tools' ``--trust-checkpoint``);
``MMVITDYN_TRUST_CHECKPOINTS=1`` in the user's shell trusts every checkpoint of
every process started from it. How a file is identified: docs/design_notes.md.
"""
import os
import os.path as osp
from contextlib import contextmanager
from contextvars import ContextVar
from typing import FrozenSet, Iterable, Iterator, List, Optional, Sequence, Union

TRUST_ENV = 'MMVITDYN_TRUST_CHECKPOINTS'
TRUST_FLAG = '--trust-checkpoint'
# The tools' ``--trust-checkpoint [PATH ...]`` option: keyword arguments of
# ``ArgumentParser.add_argument(TRUST_FLAG, ...)``; its value goes to :func:`trusted_names`.
TRUST_OPTION = dict(
    nargs='*',
    metavar='PATH',
    help='fully unpickle these checkpoints (paths or URLs; without PATHs: the checkpoint '
    'arguments of this command) although they hold more than tensors and what an mmengine '
    'Runner checkpoint holds; this can run code from the files, so only for files whose '
    f'source you trust. Other checkpoints stay refused. Put it last, or use {TRUST_FLAG}=PATH')
TRUST_VALUES = {'1': True, '0': False, '': False}

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


def env_trusts_all() -> bool:
    """Whether ``MMVITDYN_TRUST_CHECKPOINTS=1`` trusts every checkpoint."""
    value = os.environ.get(TRUST_ENV, '')
    if value not in TRUST_VALUES:
        raise ValueError(f'{TRUST_ENV}={value!r} is not one of {sorted(TRUST_VALUES)} '
                         '(1: fully unpickle every checkpoint, which can run code from them)')
    return TRUST_VALUES[value]


def is_trusted(*names, opened: Optional[os.stat_result] = None) -> bool:
    """Whether the user vouched for a checkpoint known by any of ``names``
    (URLs and scheme names; local paths as they are now) or for the open
    file whose ``os.fstat`` is ``opened``."""
    if env_trusts_all():
        return True
    trusted = _TRUSTED.get()
    keys = {checkpoint_key(name) for name in names if name is not None}
    if opened is not None:
        keys.add(file_key(opened))
    return bool(keys & trusted)


def trusted_names(option: Optional[List[str]], own: Sequence[Optional[str]]) -> List[str]:
    """The checkpoints a command's ``--trust-checkpoint`` value trusts: its PATHs;
    without PATHs (``[]``) the command's own checkpoint arguments ``own`` (None
    entries skipped); nothing when the option is absent (None).

    Raises:
        ValueError: The option has no PATHs and the command no checkpoint argument.
    """
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
