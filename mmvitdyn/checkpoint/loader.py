"""Reading a checkpoint file without running code from it, through torch's own checks.

:func:`load_checkpoint_file`, which every scheme of :mod:`.schemes`
ends in, opens the file once, refuses torch's legacy ``.tar`` format, bounds the
data the file declares (:func:`~mmvitdyn.settings.max_checkpoint_expansion` times
its size), unpickles it with torch's weights-only unpickler unless the user vouched for the file
(:mod:`.trust`), and checks the values (:mod:`.values`,
:mod:`.stored_configs`). The reasons for each step: docs/checkpoints.md.
"""
import io
import math
import os
import pickle
import re
import stat
import tarfile
import threading
import zipfile
from contextlib import contextmanager
from typing import BinaryIO, Callable, Dict, Iterator, Optional, Sequence, Union

import numpy as np
import torch
from torch.serialization import default_restore_location

from ..settings import EXPANSION_ENV, TRUST_ENV, max_checkpoint_expansion
from .pickle_scan import PickleBudgetError, scan_pickle
from .stored_configs import keep_stored_configs_as_data
from .trust import TRUST_FLAG, is_trusted
from .values import (NUMERIC_KINDS, RUNNER_CHECKPOINT_GLOBALS, CheckpointValueError, check_tensors,
                     resolve_recipes)

ZIP_MAGIC = b'PK\x03\x04'
# numpy's .npy header versions with a public reader (3.0 only adds UTF-8 field names).
NPY_HEADER_READERS = {
    (1, 0): np.lib.format.read_array_header_1_0,
    (2, 0): np.lib.format.read_array_header_2_0,
}
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


def _cap_hint(factor: float) -> str:
    return (f'at most {factor:g}x its size is allowed; for a file you trust, raise the bound '
            f'with {EXPANSION_ENV}=<factor>')


def _refuse_declared(name: str, count: int, declared: int, largest: tuple, size: int,
                     factor: float) -> None:
    """Refuse an archive whose ``count`` records declare ``declared`` bytes."""
    if declared > factor * size:
        raise UnsafeCheckpointError(
            f'checkpoint {name} is refused: its {count} records inflate to {declared} bytes '
            f'(the largest, {largest[0]}, to {largest[1]}) from a {size}-byte file; '
            f'{_cap_hint(factor)}')


def torch_zip_records(file: BinaryIO, name: str, size: int, factor: float):
    """torch's own reader of a zip checkpoint, once the records it declares
    hold at most ``factor`` x ``size`` bytes."""
    try:
        reader = torch._C.PyTorchFileReader(file)
        sizes = {record: reader.get_record_size(record) for record in reader.get_all_records()}
    except (RuntimeError, OSError, ValueError) as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise UnsafeCheckpointError(f'checkpoint {name} is not a readable torch zip archive: '
                                    f'{reason}') from None
    finally:
        file.seek(0)
    if sizes:
        _refuse_declared(name, len(sizes), sum(sizes.values()),
                         max(sizes.items(), key=lambda item: item[1]), size, factor)
    return reader


def check_npz_bounds(file: BinaryIO, name: str, size: int, factor: float) -> zipfile.ZipFile:
    """The ``.npz`` archive numpy will read (through Python's ``zipfile``), once
    its records declare at most ``factor`` x ``size`` bytes."""
    try:
        archive = zipfile.ZipFile(file)
    except (zipfile.BadZipFile, OSError, ValueError) as err:
        raise UnsafeCheckpointError(f'checkpoint {name} is not a readable zip archive: '
                                    f'{err}') from None
    members = archive.infolist()
    if members:
        largest = max(members, key=lambda member: member.file_size)
        _refuse_declared(name, len(members), sum(member.file_size for member in members),
                         (largest.filename, largest.file_size), size, factor)
    return archive


def _read_npy(stream: BinaryIO, record_size: int, name: str, key: str) -> np.ndarray:
    """One ``.npy`` record of ``record_size`` bytes: a numeric array whose
    header declares exactly the bytes that follow it."""
    shown = f'checkpoint {name} is refused: its array {key!r}'
    try:
        version = np.lib.format.read_magic(stream)
        if version not in NPY_HEADER_READERS:
            raise ValueError(f'.npy version {version} (allowed: {sorted(NPY_HEADER_READERS)})')
        shape, fortran_order, dtype = NPY_HEADER_READERS[version](stream)
    except ValueError as err:
        raise UnsafeCheckpointError(f'{shown} has no readable .npy header: {err}') from None
    if dtype.kind not in NUMERIC_KINDS or dtype.fields is not None or dtype.hasobject:
        raise UnsafeCheckpointError(f'{shown} has dtype {dtype}; only numeric arrays (kinds '
                                    f'{NUMERIC_KINDS!r}) are read')
    declared, held = math.prod(shape) * dtype.itemsize, record_size - stream.tell()
    if declared != held:
        raise UnsafeCheckpointError(f'{shown} declares shape {shape} of {dtype} ({declared} '
                                    f'bytes) but the file holds {held} bytes for it')
    data = np.frombuffer(stream.read(held), dtype=dtype)
    return data.reshape(shape, order='F' if fortran_order else 'C')


def load_npz_file(data: io.BytesIO, name: str) -> Dict[str, np.ndarray]:
    """The arrays of a ``.npz`` file (Google's Flax ViTs), read without
    pickles within the bounds above: name -> array.

    Raises:
        UnsafeCheckpointError: The archive declares more than its bound, or
            an array is not numeric or not the size its header declares; the
            message names the file and the array.
    """
    size = data.getbuffer().nbytes
    arrays = {}
    with check_npz_bounds(data, name, size, max_checkpoint_expansion()) as archive:
        for member in archive.infolist():
            key = member.filename[:-len('.npy')] if member.filename.endswith(
                '.npy') else member.filename
            with archive.open(member) as stream:
                arrays[key] = _read_npy(stream, member.file_size, name, key)
    return arrays


def _is_legacy_tar(file: BinaryIO) -> bool:
    """Whether torch would read ``file`` as its pre-0.4 tar format (reads headers only)."""
    try:
        with tarfile.open(fileobj=file, mode='r:'):
            return True
    except tarfile.TarError:
        return False
    finally:
        file.seek(0)


def _check_pickles(file: BinaryIO, reader, name: str, size: int, factor: float) -> None:
    """Refuse pickles whose calls make more than ``factor`` x ``size`` bytes
    (:func:`~.pickle_scan.scan_pickle`): of a zip, every record torch could
    unpickle as it reads them (names ending in ``.pkl`` in any case, as its
    reader matches names), from ``reader``; of a legacy file, its pickles."""
    budget = factor * size
    try:
        if reader is not None:
            for record in reader.get_all_records():
                if record.lower().endswith('.pkl'):
                    budget -= scan_pickle(io.BytesIO(reader.get_record(record)), budget)
        else:
            for _ in range(LEGACY_PICKLES):
                budget -= scan_pickle(file, budget)
    except PickleBudgetError as err:
        hint = f'; {_cap_hint(factor)}' if err.over_budget else ''
        raise UnsafeCheckpointError(f'checkpoint {name} is refused: {err}{hint}') from None
    except (ValueError, EOFError, RuntimeError) as err:
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
    # 'WeightsUnpickler error: <why>', or (torch 2.14, blocked modules) a line naming the GLOBAL.
    text = str(err)
    found = (
        re.search(r'WeightsUnpickler error:\s*([^\n]+)', text)
        or re.search(r'^([^\n]*GLOBAL [^\n]+)', text, flags=re.M))
    reason = found.group(1) if found else (text.splitlines() or [repr(err)])[0]
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


def _checked_values(loaded, shown: str, trusted: bool):
    """``loaded`` with its tensors checked and, unless trusted, its stored
    configs kept as data."""
    try:
        check_tensors(loaded, allow_shared=trusted)
    except CheckpointValueError as err:
        raise UnsafeCheckpointError(f'checkpoint {shown} is refused: {err}') from None
    return loaded if trusted else keep_stored_configs_as_data(loaded, shown)


@contextmanager
def _open_regular_file(path, shown: str) -> Iterator[BinaryIO]:
    """``path`` opened once for reading, refused unless a regular file (a FIFO
    or device is never waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, 'O_CLOEXEC', 0))
    except FileNotFoundError:
        raise FileNotFoundError(f'checkpoint {shown} can not be found') from None
    except IsADirectoryError:
        raise FileNotFoundError(f'checkpoint {shown} is a folder, not a file') from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise FileNotFoundError(f'checkpoint {shown} is not a regular file')
    os.set_blocking(fd, True)
    with os.fdopen(fd, 'rb') as file:
        yield file


def _descriptor_path(file: BinaryIO) -> str:
    """A path that opens the file ``file`` has open (for ``torch.load(mmap=True)``,
    which takes paths only), not whatever its name points to now."""
    path = f'/proc/self/fd/{file.fileno()}'
    if not os.path.exists(path):
        raise UnsafeCheckpointError('mapping a checkpoint (mmap=True) needs /proc/self/fd '
                                    '(Linux); load it without mmap')
    return path


def load_checkpoint_file(source: Source,
                         map_location=None,
                         *,
                         trusted: Optional[bool] = None,
                         trust_names: Sequence[str] = (),
                         mmap: bool = False,
                         name: Optional[str] = None,
                         via: Optional[str] = None):
    """Read a checkpoint as described in the module docstring.

    Args:
        source (str | PathLike | BytesIO): A local file or the bytes of a download.
        map_location: As for ``torch.load``.
        trusted (bool, optional): Unpickle in full (True) or not (False).
            Defaults to None: as the user vouched (:func:`~.trust.is_trusted`)
            for the file opened or one of ``trust_names``.
        trust_names (Sequence[str]): The URLs or scheme names the file was
            fetched by, which the user may have trusted. Defaults to none.
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
    factor = max_checkpoint_expansion()
    with (_in_memory(source) if in_memory else _open_regular_file(source, shown)) as file:
        opened = None if in_memory else os.fstat(file.fileno())
        if trusted is None:
            trusted = is_trusted(*trust_names, opened=opened)
        size = source.getbuffer().nbytes if in_memory else opened.st_size
        is_zip = file.read(len(ZIP_MAGIC)) == ZIP_MAGIC
        file.seek(0)
        reader = None
        if is_zip:
            reader = torch_zip_records(file, shown, size, factor)
        elif _is_legacy_tar(file):
            raise UnsafeCheckpointError(
                f'checkpoint {shown} is in the legacy .tar format of torch < 0.4, which is '
                'refused (extracting it can change files through links and hang on special '
                'files); re-save it with torch.save in an environment you trust')
        else:  # torch's legacy pickle format: the storages' bytes follow the pickles
            map_location = _bounded_restore(map_location, factor * size)
        _check_pickles(file, reader, shown, size, factor)
        del reader
        if mmap and (in_memory or not is_zip):
            raise UnsafeCheckpointError(f'checkpoint {shown} cannot be mapped (mmap=True): only '
                                        "a file in torch's zip format can; load it without mmap")
        # The checked open file itself is read (for mmap, through its descriptor).
        target = _descriptor_path(file) if mmap else file
        try:
            if trusted:
                loaded = torch.load(
                    target, map_location=map_location, weights_only=False, mmap=mmap)
            else:
                loaded = _load_weights_only(target, shown, name, map_location, mmap)
        except _OverBudget as err:
            raise UnsafeCheckpointError(f'checkpoint {shown} is refused: {err}, from a '
                                        f'{size}-byte file; {_cap_hint(factor)}') from None
        except UnsafeCheckpointError:
            raise
        except Exception as err:  # a trusted file torch cannot read
            reason = str(err).splitlines()[0] if str(err) else ''
            raise UnsafeCheckpointError(f'checkpoint {shown} could not be read by torch: '
                                        f'{type(err).__name__}: {reason}') from None
    return _checked_values(loaded, shown, trusted)


@contextmanager
def _in_memory(buffer: io.BytesIO) -> Iterator[io.BytesIO]:
    """An in-memory download, rewound before and after."""
    buffer.seek(0)
    try:
        yield buffer
    finally:
        buffer.seek(0)
