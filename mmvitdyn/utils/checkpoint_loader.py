"""Local checkpoint loading that runs no code from the file, on torch >= 2.1.

A pickle can call any function while it is loaded, so a ``.pth`` file from
elsewhere must not be fully unpickled. mmengine 0.10.7 calls ``torch.load``
without ``weights_only`` (full unpickling before torch 2.6), and a Runner
checkpoint holds more than torch's ``weights_only=True`` accepts: the message
hub's history buffers, numpy arrays, scalars and dtypes.

:func:`load_local_checkpoint` (registered as mmengine's loader for local
paths) hands ``torch.load`` :data:`RESTRICTED_PICKLE` as its pickle module,
so storages, ``map_location`` and the legacy formats stay torch's, while the
unpickling is :class:`RestrictedUnpickler`'s: a name in the pickle resolves
only to an object of :data:`ALLOWED_GLOBALS` (torch's own ``weights_only``
allow-list of the installed torch, plus :data:`RUNNER_CHECKPOINT_TYPES`) and
nothing is imported, and every operation that calls or changes an object
reaches only allowed callables, instances of allowed classes, and lists,
dicts and sets, as torch's weights-only unpickler allows. A TorchScript
archive (which ``torch.load`` would pass to ``torch.jit.load``) is refused.

One code path for every supported torch: torch can extend its own
weights-only allow-list only from 2.4 (``add_safe_globals``), for the length
of a load from 2.5 (``safe_globals``), and with the named entries a Runner
checkpoint needs (``builtins.getattr`` restricted to HistoryBuffer's
statistics, numpy 1.x's ``numpy.core`` names) from 2.6. What this module
takes from torch's internals (``_weights_only_unpickler._get_allowed_globals``
and the zip tests of ``torch.serialization``) is the same from 2.1 to 2.14.
Nothing process-wide changes, during or after the load.

A checkpoint that needs anything else is refused with
:class:`UnsafeCheckpointError`, naming what it needs. Full unpickling is the
explicit opt-in of the environment variable ``MMVITDYN_TRUST_CHECKPOINTS=1``,
which the tools' flag ``--trust-checkpoint`` sets.
"""
import _compat_pickle
import codecs
import os
import os.path as osp
import pickle
from types import SimpleNamespace
from typing import Any, Dict

import numpy as np
import torch
from mmengine.logging import HistoryBuffer
from mmengine.runner import CheckpointLoader
from torch._weights_only_unpickler import _get_allowed_globals
from torch.serialization import _is_torchscript_zip, _is_zipfile, _open_zipfile_reader

TRUST_ENV = 'MMVITDYN_TRUST_CHECKPOINTS'
TRUST_FLAG = '--trust-checkpoint'
TRUST_VALUES = {'1': True, '0': False, '': False}

HISTORY_BUFFER_STATISTICS = ('min', 'max', 'current', 'mean')


class UnsafeCheckpointError(pickle.UnpicklingError):
    """A checkpoint that needs more than :data:`ALLOWED_GLOBALS`."""


class _NotAllowed(pickle.UnpicklingError):
    """Raised while unpickling; the message is what the pickle needs."""


def history_buffer_statistic(owner, name: str):
    """``getattr`` restricted to what a pickled ``HistoryBuffer`` asks for.

    A HistoryBuffer pickles its statistics methods as
    ``getattr(HistoryBuffer, 'mean')``; any other ``getattr`` (which could
    reach e.g. ``numpy.ndarray.tofile``) is refused.
    """
    if owner is not HistoryBuffer or name not in HISTORY_BUFFER_STATISTICS:
        raise _NotAllowed(f'builtins.getattr({getattr(owner, "__qualname__", owner)}, {name!r}) '
                          f'(allowed: HistoryBuffer statistics {HISTORY_BUFFER_STATISTICS})')
    return getattr(owner, name)


# numpy's unpickling functions, as numpy itself pickles arrays and scalars with
# them; numpy 1.x names their module ``numpy.core``, numpy 2 ``numpy._core``.
_RECONSTRUCT = np.zeros(0).__reduce__()[0]
_SCALAR = np.float64(0).__reduce__()[0]
_NUMPY_CORES = ('numpy.core', 'numpy._core')

# What torch.save of an mmengine Runner checkpoint contains besides tensors and
# plain containers: the message hub's HistoryBuffers (numpy arrays and their
# statistics methods inside) and numpy scalars (e.g. the best score).
RUNNER_CHECKPOINT_TYPES = [
    HistoryBuffer,
    (history_buffer_statistic, 'builtins.getattr'),
    np.ndarray,
    np.dtype,
    # bool, integer and real dtypes: the message hub logs numpy scalars of any of them
    *sorted(
        {type(np.dtype(code))
         for code in '?' + np.typecodes['AllInteger'] + np.typecodes['Float']},
        key=lambda cls: cls.__name__),
    *((_RECONSTRUCT, f'{core}.multiarray._reconstruct') for core in _NUMPY_CORES),
    *((_SCALAR, f'{core}.multiarray.scalar') for core in _NUMPY_CORES),
    # bytes in a protocol-2 pickle (a numpy array's data); torch allows it from 2.5
    codecs.encode,
]


def _qualified_name(obj) -> str:
    return f'{obj.__module__}.{obj.__qualname__}'


def _allowed_globals() -> Dict[str, Any]:
    allowed = dict(_get_allowed_globals())
    for entry in RUNNER_CHECKPOINT_TYPES:
        obj, name = entry if isinstance(entry, tuple) else (entry, _qualified_name(entry))
        allowed[name] = obj
    return allowed


#: Qualified name -> object: all that a checkpoint's pickle may name.
ALLOWED_GLOBALS = _allowed_globals()
_ALLOWED_IDS = frozenset(map(id, ALLOWED_GLOBALS.values()))


def _describe(obj) -> str:
    """``module.qualname`` of a class or function, ``a module.qualname`` of another object."""
    if isinstance(getattr(obj, '__qualname__', None), str):
        return _qualified_name(obj)
    return f'a {_qualified_name(type(obj))}'


# Opcodes that torch.save never writes: refused.
REFUSED_OPCODES = ('INST', 'OBJ', 'PERSID', 'EXT1', 'EXT2', 'EXT4')


def _refused_opcode(name: str):
    """An unpickler operation that refuses the pickle opcode ``name``."""

    def load(unpickler):
        raise _NotAllowed(f'the pickle opcode {name}')

    return load


class RestrictedUnpickler(pickle._Unpickler):
    """Python's pure-Python unpickler, restricted as torch's weights-only one.

    The C ``pickle.Unpickler`` can only restrict the names it resolves
    (:meth:`find_class`); this one also checks what each operation calls or
    changes, before the operation runs:

    - REDUCE, NEWOBJ, NEWOBJ_EX call only an object of :data:`ALLOWED_GLOBALS`;
    - BUILD sets the state of instances of allowed classes only;
    - APPEND(S), SETITEM(S), ADDITEMS fill only a list, dict or set (or an
      instance of an allowed subclass of one);
    - :data:`REFUSED_OPCODES` are refused.
    """

    dispatch = dict(pickle._Unpickler.dispatch)

    def find_class(self, module: str, name: str):
        """The allowed object of that name; nothing is imported."""
        if self.proto < 3 and self.fix_imports:  # Python 2 names, as protocol 2 writes them
            if (module, name) in _compat_pickle.NAME_MAPPING:
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            elif module in _compat_pickle.IMPORT_MAPPING:
                module = _compat_pickle.IMPORT_MAPPING[module]
        full_name = f'{module}.{name}'
        if full_name not in ALLOWED_GLOBALS:
            raise _NotAllowed(full_name)
        return ALLOWED_GLOBALS[full_name]

    def _check_call(self, func) -> None:
        if id(func) not in _ALLOWED_IDS:
            raise _NotAllowed(f'a call of {_describe(func)}')

    def _check_fill(self, container, kind: type) -> None:
        if type(container) is not kind and not (isinstance(container, kind)
                                                and id(type(container)) in _ALLOWED_IDS):
            raise _NotAllowed(f'items added to {_describe(container)}')

    def load_reduce(self):  # stack: func, args
        self._check_call(self.stack[-2])
        super().load_reduce()

    dispatch[pickle.REDUCE[0]] = load_reduce

    def load_newobj(self):  # stack: cls, args
        self._check_call(self.stack[-2])
        super().load_newobj()

    dispatch[pickle.NEWOBJ[0]] = load_newobj

    def load_newobj_ex(self):  # stack: cls, args, kwargs
        self._check_call(self.stack[-3])
        super().load_newobj_ex()

    dispatch[pickle.NEWOBJ_EX[0]] = load_newobj_ex

    def load_build(self):  # stack: instance, state
        instance = self.stack[-2]
        if id(type(instance)) not in _ALLOWED_IDS:
            raise _NotAllowed(f'the state of {_describe(instance)} set')
        super().load_build()

    dispatch[pickle.BUILD[0]] = load_build

    def load_append(self):  # stack: list, item
        self._check_fill(self.stack[-2], list)
        super().load_append()

    dispatch[pickle.APPEND[0]] = load_append

    def load_appends(self):  # stack: list, MARK, items
        self._check_fill(self.metastack[-1][-1], list)
        super().load_appends()

    dispatch[pickle.APPENDS[0]] = load_appends

    def load_setitem(self):  # stack: dict, key, value
        self._check_fill(self.stack[-3], dict)
        super().load_setitem()

    dispatch[pickle.SETITEM[0]] = load_setitem

    def load_setitems(self):  # stack: dict, MARK, keys and values
        self._check_fill(self.metastack[-1][-1], dict)
        super().load_setitems()

    dispatch[pickle.SETITEMS[0]] = load_setitems

    def load_additems(self):  # stack: set, MARK, items
        self._check_fill(self.metastack[-1][-1], set)
        super().load_additems()

    dispatch[pickle.ADDITEMS[0]] = load_additems
    dispatch.update({getattr(pickle, name)[0]: _refused_opcode(name) for name in REFUSED_OPCODES})


#: The ``pickle_module`` handed to ``torch.load``: it uses ``Unpickler`` and ``load``.
RESTRICTED_PICKLE = SimpleNamespace(
    __name__=f'{__name__}.RESTRICTED_PICKLE',
    Unpickler=RestrictedUnpickler,
    load=lambda file, **kwargs: RestrictedUnpickler(file, **kwargs).load())


def checkpoints_trusted() -> bool:
    """Whether ``MMVITDYN_TRUST_CHECKPOINTS`` opts in to full unpickling."""
    value = os.environ.get(TRUST_ENV, '')
    if value not in TRUST_VALUES:
        raise ValueError(f'{TRUST_ENV}={value!r} is not one of {sorted(TRUST_VALUES)} '
                         '(1: fully unpickle checkpoints, which can run code from them)')
    return TRUST_VALUES[value]


def _is_torchscript(filename: str) -> bool:
    """Whether ``torch.load`` would hand the file to ``torch.jit.load`` (torch's own test)."""
    with open(filename, 'rb') as file:
        if not _is_zipfile(file):
            return False
    with _open_zipfile_reader(filename) as archive:
        return _is_torchscript_zip(archive)


def load_local_checkpoint(filename: str, map_location=None) -> dict:
    """``torch.load`` a local checkpoint without running code from it.

    Raises:
        FileNotFoundError: ``filename`` does not exist.
        UnsafeCheckpointError: The checkpoint needs more than
            :data:`ALLOWED_GLOBALS` (and ``MMVITDYN_TRUST_CHECKPOINTS`` is
            not 1); the message names what it needs.
    """
    filename = osp.expanduser(filename)
    if not osp.isfile(filename):
        raise FileNotFoundError(f'checkpoint {filename} can not be found')
    if checkpoints_trusted():
        return torch.load(filename, map_location=map_location, weights_only=False)
    try:
        if _is_torchscript(filename):
            raise _NotAllowed('torch.jit.load (it is a TorchScript archive)')
        return torch.load(
            filename,
            map_location=map_location,
            pickle_module=RESTRICTED_PICKLE,
            weights_only=False)
    except _NotAllowed as err:
        raise UnsafeCheckpointError(
            f'checkpoint {filename} is refused: it needs {err}, beyond tensors and what an '
            'mmengine Runner checkpoint holds, and unpickling that can run code from the file. '
            f'Only if you trust its source, pass {TRUST_FLAG} to the tool or set {TRUST_ENV}=1.'
        ) from err


def register_local_checkpoint_loader() -> None:
    """Make mmengine's ``CheckpointLoader`` use :func:`load_local_checkpoint`."""
    CheckpointLoader.register_scheme(prefixes='', loader=load_local_checkpoint, force=True)
