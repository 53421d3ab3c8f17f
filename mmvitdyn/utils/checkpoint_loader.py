"""Reading a checkpoint file without running code from it, through torch's own checks.

A pickle can call any function while it is loaded, so a ``.pth`` file from
elsewhere must not be fully unpickled (mmengine 0.10.7 calls ``torch.load``
without ``weights_only``, and ``torch.hub`` with ``weights_only=False``).
:func:`load_checkpoint_file`, which every checkpoint scheme ends in
(:mod:`.checkpoint_schemes`), opens the file once and reads it so:

1. **Format.** torch's zip format and its legacy pickle format are read;
   the legacy ``.tar`` format (torch < 0.4) is refused, trusted or not:
   extracting it applies member modes, owners and times through links and
   opens special files.
2. **Bounds**, all relative to the file's size (:func:`max_expansion`
   times it): the records a zip declares (a deflate bomb inflates before
   any other check; a record with two zip64 size fields, which Python and
   torch's reader read differently, is refused), the storages a legacy file
   declares (checked as torch creates each one, uninitialised and untouched,
   before its bytes are read), and the bytes the pickle's own calls make
   (:mod:`.pickle_scan`).
3. **Unpickling.** torch's weights-only unpickler (``weights_only=True``),
   with :data:`~.checkpoint_values.RUNNER_CHECKPOINT_GLOBALS` allowed for the
   load through ``torch.serialization.safe_globals``: torch checks every
   global, refuses TorchScript archives and validates sparse tensors; numpy
   values and history buffers come back from their checked recipes.
   ``safe_globals`` edits torch's process-wide allow-list for the duration
   of the load, so loads are serialised, and entries of the user's own that
   carry the same names are set aside meanwhile.

Only what the user vouched for (:mod:`.checkpoint_trust`) is unpickled in
full (``weights_only=False``), after the same format and bound checks.
torch before 2.6 has neither named allow-list entries nor a weights-only
unpickler without known ways to run code, so there every untrusted load is
refused, naming the opt-in.
"""
import io
import os
import pickle
import re
import tarfile
import threading
import zipfile
from contextlib import contextmanager
from typing import BinaryIO, Callable, Iterator, Optional, Union

import torch
from torch.serialization import default_restore_location

from .checkpoint_trust import TRUST_ENV, TRUST_FLAG
from .checkpoint_values import RUNNER_CHECKPOINT_GLOBALS, CheckpointValueError, resolve_recipes
from .pickle_scan import PickleBudgetError, scan_pickle

EXPANSION_ENV = 'MMVITDYN_CHECKPOINT_MAX_EXPANSION'
DEFAULT_MAX_EXPANSION = 4.0
ZIP_MAGIC = b'PK\x03\x04'
ZIP64_EXTRA_ID = 0x0001
# The pickles of torch's legacy format: magic number, protocol, system info,
# the object, the storage keys (the storages' bytes follow).
LEGACY_PICKLES = 5


def _torch_release(version: str) -> tuple:
    """(major, minor) of a torch version string, pre-releases included."""
    return tuple(int(part) for part in re.findall(r'\d+', version)[:2])


#: Whether the installed torch can load untrusted checkpoints safely.
TORCH_LOADS_SAFELY = _torch_release(torch.__version__) >= (2, 6)

Source = Union[str, os.PathLike, io.BytesIO]
_LOAD_LOCK = threading.Lock()


class UnsafeCheckpointError(pickle.UnpicklingError):
    """A checkpoint refused: it needs more than a weights-only load allows, is
    of a refused format, declares more data than it can hold, or fails
    torch's checks. The message names the file and what to do."""


class _OverBudget(Exception):
    """Raised inside ``torch.load`` when a legacy file's storages exceed the bound."""


def max_expansion() -> float:
    """The bound on declared data over file size (``MMVITDYN_CHECKPOINT_MAX_EXPANSION``)."""
    value = os.environ.get(EXPANSION_ENV, '')
    if not value:
        return DEFAULT_MAX_EXPANSION
    try:
        factor = float(value)
    except ValueError:
        factor = float('nan')
    if not factor > 0:
        raise ValueError(f'{EXPANSION_ENV}={value!r} must be a number > 0 (the most data a '
                         f'checkpoint may declare, as a multiple of its file size; default '
                         f'{DEFAULT_MAX_EXPANSION})')
    return factor


def _cap_hint(factor: float) -> str:
    return (f'at most {factor:g}x its size is allowed; for a file you trust, raise the bound '
            f'with {EXPANSION_ENV}=<factor>')


def _zip64_fields(extra: bytes) -> int:
    """How many zip64 extended-information blocks a zip extra field holds."""
    count, offset = 0, 0
    while offset + 4 <= len(extra):
        header, length = int.from_bytes(extra[offset:offset + 2],
                                        'little'), int.from_bytes(extra[offset + 2:offset + 4],
                                                                  'little')
        count += header == ZIP64_EXTRA_ID
        offset += 4 + length
    return count


def check_zip_bounds(file: BinaryIO, name: str, size: int, factor: float) -> zipfile.ZipFile:
    """Refuse a zip whose records declare more than ``factor`` x ``size``
    bytes, or carry two zip64 size fields; returns the opened archive."""
    try:
        archive = zipfile.ZipFile(file)
    except (zipfile.BadZipFile, OSError, ValueError) as err:
        raise UnsafeCheckpointError(f'checkpoint {name} is not a readable zip archive: '
                                    f'{err}') from None
    members = archive.infolist()
    doubled = [m.filename for m in members if _zip64_fields(m.extra) > 1]
    if doubled:
        raise UnsafeCheckpointError(f'checkpoint {name} is refused: its records {doubled} carry '
                                    'two zip64 size fields (readers disagree on their size)')
    declared = sum(member.file_size for member in members)
    if declared > factor * size:
        largest = max(members, key=lambda member: member.file_size)
        raise UnsafeCheckpointError(
            f'checkpoint {name} is refused: its {len(members)} records inflate to {declared} '
            f'bytes (the largest, {largest.filename}, to {largest.file_size}) from a '
            f'{size}-byte file; {_cap_hint(factor)}')
    return archive


def _is_legacy_tar(file: BinaryIO) -> bool:
    """Whether torch would read ``file`` as its pre-0.4 tar format (reads headers only)."""
    try:
        with tarfile.open(fileobj=file, mode='r:'):
            return True
    except tarfile.TarError:
        return False
    finally:
        file.seek(0)


def _check_pickles(file: BinaryIO, is_zip: bool, name: str, size: int, factor: float) -> None:
    """Refuse pickles whose calls make more than ``factor`` x ``size`` bytes
    (:func:`~.pickle_scan.scan_pickle`)."""
    budget = factor * size
    try:
        if is_zip:
            with zipfile.ZipFile(file) as archive:
                for member in archive.infolist():
                    if member.filename.endswith('.pkl'):
                        with archive.open(member) as stream:
                            budget -= scan_pickle(stream, budget)
        else:
            for _ in range(LEGACY_PICKLES):
                budget -= scan_pickle(file, budget)
    except PickleBudgetError as err:
        hint = f'; {_cap_hint(factor)}' if err.over_budget else ''
        raise UnsafeCheckpointError(f'checkpoint {name} is refused: {err}{hint}') from None
    except (ValueError, EOFError, zipfile.BadZipFile) as err:
        raise UnsafeCheckpointError(f'checkpoint {name} is not a readable torch file: '
                                    f'{type(err).__name__}: {err}') from None
    finally:
        file.seek(0)


def _restore(map_location, storage, location: str):
    """Move a storage as ``torch.load`` does for ``map_location``."""
    if map_location is None:
        return default_restore_location(storage, location)
    if isinstance(map_location, dict):
        return default_restore_location(storage, map_location.get(location, location))
    if isinstance(map_location, (str, torch.device)):
        return default_restore_location(storage, str(map_location))
    result = map_location(storage, location)
    return default_restore_location(storage, location) if result is None else result


def _bounded_restore(map_location, budget: float) -> Callable:
    """A ``map_location`` that refuses storages once they declare more than
    ``budget`` bytes in all; torch calls it as it creates each storage
    (uninitialised memory that nothing has touched) and before reading it."""
    declared = [0, 0]  # bytes, storages

    def restore(storage, location):
        declared[0] += storage.nbytes()
        declared[1] += 1
        if declared[0] > budget:
            raise _OverBudget(f'storage {declared[1]} ({storage.nbytes()} bytes) brings the '
                              f'declared tensor data to {declared[0]} bytes')
        return _restore(map_location, storage, location)

    return restore


def _opt_in(name: str) -> str:
    return (f'Only if you trust its source, pass {TRUST_FLAG} {name} to the tool (or set '
            f'{TRUST_ENV}=1 in your shell).')


def _torch_refusal(shown: str, name: str, err: Exception) -> UnsafeCheckpointError:
    """Our error for one of torch's weights-only refusals, with the opt-in for ``name``."""
    found = re.search(r'WeightsUnpickler error:\s*([^\n]+)', str(err))
    reason = found.group(1) if found else str(err).splitlines()[0]
    return UnsafeCheckpointError(
        f'checkpoint {shown} is refused: {reason.rstrip(".")}. A weights-only load allows '
        'tensors, plain containers and what an mmengine Runner checkpoint holds (history '
        f'buffers, numpy values); anything else could run code from the file. {_opt_in(name)}')


@contextmanager
def _runner_globals() -> Iterator[None]:
    """:data:`RUNNER_CHECKPOINT_GLOBALS` allowed, and the user's process-wide
    entries of the same names set aside, for the block (one block at a time)."""
    names = {entry[1] for entry in RUNNER_CHECKPOINT_GLOBALS}
    with _LOAD_LOCK:
        saved = torch.serialization.get_safe_globals()
        clashing = [
            entry for entry in saved
            if (entry[1] if isinstance(entry, tuple) else
                f'{getattr(entry, "__module__", "")}.{getattr(entry, "__qualname__", "")}') in names
        ]
        if clashing:
            torch.serialization.clear_safe_globals()
            torch.serialization.add_safe_globals([e for e in saved if e not in clashing])
        try:
            with torch.serialization.safe_globals(RUNNER_CHECKPOINT_GLOBALS):
                yield
        finally:
            if clashing:
                torch.serialization.clear_safe_globals()
                torch.serialization.add_safe_globals(saved)


def _load_weights_only(source, shown: str, name: str, map_location, mmap: bool):
    """torch's weights-only load with the Runner checkpoint recipes, resolved;
    errors show the checkpoint as ``shown`` and name ``name`` in the opt-in."""
    if not TORCH_LOADS_SAFELY:
        raise UnsafeCheckpointError(
            f'checkpoint {shown} is refused: torch {torch.__version__} cannot load checkpoints '
            'without running code from crafted files (its weights-only loader can be bypassed '
            'before 2.6, and it cannot name the types of Runner checkpoints); install torch '
            f'>= 2.6. {_opt_in(name)}')
    try:
        with _runner_globals():
            loaded = torch.load(source, map_location=map_location, weights_only=True, mmap=mmap)
        return resolve_recipes(loaded)
    except _OverBudget:
        raise
    except CheckpointValueError as err:
        raise UnsafeCheckpointError(f'checkpoint {shown} is refused: it holds {err}') from None
    except pickle.UnpicklingError as err:
        raise _torch_refusal(shown, name, err) from None
    except Exception as err:  # torch's checks, and what malformed pickles make it raise
        reason = str(err).splitlines()[0] if str(err) else ''
        raise UnsafeCheckpointError(f"checkpoint {shown} is refused by torch's checks: "
                                    f'{type(err).__name__}: {reason}') from None


def _same_file(path: str, checked: os.stat_result) -> bool:
    now = os.stat(path)
    return (now.st_dev, now.st_ino, now.st_size,
            now.st_mtime_ns) == (checked.st_dev, checked.st_ino, checked.st_size,
                                 checked.st_mtime_ns)


def load_checkpoint_file(source: Source,
                         map_location=None,
                         *,
                         trusted: bool = False,
                         mmap: bool = False,
                         name: Optional[str] = None,
                         via: Optional[str] = None):
    """Read a checkpoint as described in the module docstring.

    Args:
        source (str | PathLike | BytesIO): A local file or the bytes of a download.
        map_location: As for ``torch.load``.
        trusted (bool): Unpickle in full (the user vouched for the file).
            Defaults to False.
        mmap (bool): Map the tensors from the file (zip format, paths only).
            Defaults to False.
        name (str, optional): The checkpoint as the user named it (a URL or
            ``scheme://`` name for a download), in errors and the opt-in they
            suggest. Defaults to the path.
        via (str, optional): Where it was read from, shown after ``name``
            (the URL it resolved to, the cached file).

    Raises:
        FileNotFoundError: A path that is no regular file.
        UnsafeCheckpointError: The checkpoint is refused; the message says why
            and what to do.
    """
    in_memory = isinstance(source, io.BytesIO)
    if name is None:
        name = 'in memory' if in_memory else os.fspath(source)
    shown = f'{name} ({via})' if via else name
    if not in_memory and not os.path.isfile(source):
        raise FileNotFoundError(f'checkpoint {shown} can not be found')
    factor = max_expansion()
    with (_in_memory(source) if in_memory else open(source, 'rb')) as file:
        checked = None if in_memory else os.fstat(file.fileno())
        size = source.getbuffer().nbytes if in_memory else checked.st_size
        is_zip = file.read(len(ZIP_MAGIC)) == ZIP_MAGIC
        file.seek(0)
        if is_zip:
            check_zip_bounds(file, shown, size, factor).close()
            file.seek(0)
        elif _is_legacy_tar(file):
            raise UnsafeCheckpointError(
                f'checkpoint {shown} is in the legacy .tar format of torch < 0.4, which is '
                'refused (extracting it can change files through links and hang on special '
                'files); re-save it with torch.save in an environment you trust')
        else:  # torch's legacy pickle format: the storages' bytes follow the pickles
            map_location = _bounded_restore(map_location, factor * size)
        _check_pickles(file, is_zip, shown, size, factor)
        # The checked file object itself is read (a path only for mmap, checked after).
        target = source if mmap else file
        try:
            if trusted:
                loaded = torch.load(
                    target, map_location=map_location, weights_only=False, mmap=mmap)
            else:
                loaded = _load_weights_only(target, shown, name, map_location, mmap)
        except _OverBudget as err:
            raise UnsafeCheckpointError(f'checkpoint {shown} is refused: {err}, from a '
                                        f'{size}-byte file; {_cap_hint(factor)}') from None
    if mmap and not _same_file(source, checked):
        raise UnsafeCheckpointError(f'checkpoint {shown} changed while it was read')
    return loaded


@contextmanager
def _in_memory(buffer: io.BytesIO) -> Iterator[io.BytesIO]:
    """An in-memory download, rewound before and after."""
    buffer.seek(0)
    try:
        yield buffer
    finally:
        buffer.seek(0)
