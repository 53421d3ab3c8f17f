"""The non-tensor values of an mmengine Runner checkpoint, unpickled as data.

The names a Runner checkpoint's numpy values and ``HistoryBuffer`` s are pickled
under are allowed as *recipes* (:data:`RUNNER_CHECKPOINT_GLOBALS`): inert
objects that check what the pickle gives them, turned into the real values by
:func:`resolve_recipes` once the pickle is read (why: docs/checkpoints.md).
"""
import math
import reprlib
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np
import torch
from mmengine.logging import HistoryBuffer

# Numeric kinds a checkpoint's numpy values may have: bool, ints, floats, complex.
NUMERIC_KINDS = 'biufc'
BYTE_ORDERS = ('<', '>', '|', '=')
HISTORY_BUFFER_STATISTICS = ('min', 'max', 'current', 'mean')
HISTORY_BUFFER_FIELDS = ('max_length', '_log_history', '_count_history', 'statistics_methods')
# The instance attributes a dict built as ``OrderedDict`` may carry.
DICT_ATTRIBUTES = ('_metadata', )


class CheckpointValueError(ValueError):
    """A recipe's arguments or state are not those of a plain value."""


class Recipe:
    """What a pickle builds in place of a numpy or mmengine object."""

    def resolve(self, resolve_value) -> Any:
        """The real object; ``resolve_value`` resolves nested values."""
        raise NotImplementedError


class DTypeRecipe(Recipe):
    """``numpy.dtype(code, align, copy)`` of a numeric dtype, then its canonical state
    only (byte order aside)."""
    dtype = None  # set by __init__, which a NEWOBJ of the class skips

    def __init__(self, code, align=False, copy=False):
        if not isinstance(code, str) or not isinstance(align, bool) or not isinstance(copy, bool):
            raise CheckpointValueError(f'numpy.dtype{(code, align, copy)!r}: expected a dtype code')
        try:
            dtype = np.dtype(code)
        except TypeError as err:
            raise CheckpointValueError(f'numpy.dtype({code!r}): {err}') from err
        if dtype.kind not in NUMERIC_KINDS or not dtype.isbuiltin or dtype.fields is not None:
            raise CheckpointValueError(f'numpy.dtype({code!r}) is not a numeric dtype '
                                       f'(kinds {NUMERIC_KINDS!r})')
        self.dtype = dtype

    def __setstate__(self, state) -> None:
        if self.dtype is None:
            raise CheckpointValueError('a numpy dtype built without its code')
        canonical = self.dtype.__reduce__()[2]
        if (not isinstance(state, tuple) or len(state) != len(canonical)
                or state[1] not in BYTE_ORDERS or state[0] != canonical[0]
                or state[2:] != canonical[2:]):
            raise CheckpointValueError(f'the state {reprlib.repr(state)} of numpy.dtype('
                                       f'{self.dtype.str!r}) is not its own ({canonical!r}, any '
                                       'byte order)')
        if state[1] in '<>':
            self.dtype = self.dtype.newbyteorder(state[1])

    def resolve(self, resolve_value) -> np.dtype:
        if self.dtype is None:
            raise CheckpointValueError('a numpy dtype built without its code')
        return self.dtype

    def __repr__(self) -> str:
        return f'<recipe of numpy.dtype({getattr(self.dtype, "str", None)!r})>'


class NdArrayName:
    """What the name ``numpy.ndarray`` stands for: the class argument of an
    array's ``_reconstruct``, never a callable."""

    def __call__(self, *args, **kwargs):
        raise CheckpointValueError('a call of numpy.ndarray (allowed only as the class '
                                   'argument of an array reconstruction)')

    def __repr__(self) -> str:
        return 'numpy.ndarray'


NDARRAY = NdArrayName()


class ArrayRecipe(Recipe):
    """``numpy.core.multiarray._reconstruct(ndarray, shape, typecode)``, then
    its state ``(1, shape, dtype, is_fortran, raw bytes)``."""
    array = None  # set by __setstate__

    def __init__(self, cls, shape, typecode):
        if cls is not NDARRAY:
            raise CheckpointValueError(f'_reconstruct of {cls!r}: only numpy.ndarray is allowed')

    def __setstate__(self, state) -> None:
        if not isinstance(state, tuple) or len(state) != 5 or state[0] != 1:
            raise CheckpointValueError(f'numpy array state {type(state).__name__} is not '
                                       '(1, shape, dtype, is_fortran, bytes)')
        _, shape, dtype, is_fortran, raw = state
        if (not isinstance(shape, tuple) or
                not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape)):
            raise CheckpointValueError(f'numpy array shape {shape!r} is not a tuple of sizes')
        if (not isinstance(dtype, DTypeRecipe) or dtype.dtype is None
                or not isinstance(is_fortran, bool)):
            raise CheckpointValueError('numpy array state needs a numeric dtype and a bool order')
        if not isinstance(raw, (bytes, bytearray)):
            raise CheckpointValueError(f'numpy array data is a {type(raw).__name__}, not bytes')
        expected = math.prod(shape) * dtype.dtype.itemsize
        if len(raw) != expected:
            raise CheckpointValueError(f'numpy array of shape {shape} and dtype {dtype.dtype} has '
                                       f'{len(raw)} bytes of data, expected {expected}')
        flat = np.frombuffer(bytes(raw), dtype=dtype.dtype)
        self.array = flat.reshape(shape, order='F' if is_fortran else 'C').copy(order='K')

    def resolve(self, resolve_value) -> np.ndarray:
        if self.array is None:
            raise CheckpointValueError('a numpy array without its data')
        return self.array


def numpy_scalar(dtype, data) -> np.generic:
    """``numpy.core.multiarray.scalar(dtype, bytes)`` of a numeric dtype."""
    if not isinstance(dtype, DTypeRecipe) or dtype.dtype is None or not isinstance(data, bytes):
        raise CheckpointValueError('numpy scalar needs a numeric dtype and its bytes')
    if len(data) != dtype.dtype.itemsize:
        raise CheckpointValueError(f'numpy scalar of {dtype.dtype} has {len(data)} bytes, '
                                   f'expected {dtype.dtype.itemsize}')
    return np.frombuffer(data, dtype=dtype.dtype)[0]


def _check_history_fields(state) -> None:
    if not isinstance(state, dict) or not set(state) <= set(HISTORY_BUFFER_FIELDS):
        raise CheckpointValueError(
            'HistoryBuffer state has fields '
            f'{sorted(map(str, state)) if isinstance(state, dict) else type(state).__name__}; '
            f'allowed: {HISTORY_BUFFER_FIELDS}')


class HistoryBufferRecipe(Recipe):
    """A pickled :class:`~mmengine.logging.HistoryBuffer`: its known fields only."""
    state = None  # a copy of the pickled state, set by __setstate__

    def __setstate__(self, state) -> None:
        _check_history_fields(state)
        self.state = dict(state)  # the pickle may add to its own dict later (memo)

    def resolve(self, resolve_value) -> HistoryBuffer:
        _check_history_fields(self.state or {})
        state = {key: resolve_value(value) for key, value in (self.state or {}).items()}
        missing = [key for key in HISTORY_BUFFER_FIELDS[:3] if key not in state]
        if missing:
            raise CheckpointValueError(f'HistoryBuffer state lacks {missing}')
        length = state['max_length']
        if isinstance(length, bool) or not isinstance(length, int) or length < 1:
            raise CheckpointValueError(f'HistoryBuffer max_length={length!r} is not an int >= 1')
        for key in ('_log_history', '_count_history'):
            if not (isinstance(state[key], np.ndarray) and state[key].ndim == 1):
                raise CheckpointValueError(f'HistoryBuffer {key} is not a 1-d numpy array')
        methods = state.get('statistics_methods', {})
        if not isinstance(methods, dict) or any(
                name not in HISTORY_BUFFER_STATISTICS or method is not getattr(HistoryBuffer, name)
                for name, method in methods.items()):
            raise CheckpointValueError(
                'HistoryBuffer statistics_methods must map each of '
                f'{HISTORY_BUFFER_STATISTICS} to the HistoryBuffer method of that name')
        buffer = HistoryBuffer.__new__(HistoryBuffer)
        buffer.__setstate__({key: state[key] for key in HISTORY_BUFFER_FIELDS if key in state})
        return buffer


def history_buffer_statistic(owner, name):
    """``getattr`` restricted to what a pickled ``HistoryBuffer`` asks for:
    ``getattr(HistoryBuffer, 'mean')`` and the other built-in statistics."""
    if owner is not HistoryBufferRecipe or name not in HISTORY_BUFFER_STATISTICS:
        raise CheckpointValueError(
            f'builtins.getattr({getattr(owner, "__name__", type(owner).__name__)}, {name!r}) '
            f'(allowed: HistoryBuffer statistics {HISTORY_BUFFER_STATISTICS})')
    return getattr(HistoryBuffer, name)


def no_bytes(*args) -> bytes:
    """``bytes()``: how protocol 2 pickles ``b''`` (other bytes are ``_codecs.encode``)."""
    if args:
        raise CheckpointValueError(f'builtins.bytes of {type(args[0]).__name__}: only bytes() '
                                   '(empty) is allowed')
    return b''


# numpy 1.x names its pickling module ``numpy.core``, numpy 2 ``numpy._core``.
_NUMPY_CORES = ('numpy.core', 'numpy._core')

#: (object, pickled name) pairs for ``torch.serialization.safe_globals``:
#: everything a Runner checkpoint holds beyond torch's own allow-list.
RUNNER_CHECKPOINT_GLOBALS: List[Tuple[Any, str]] = [
    (HistoryBufferRecipe, 'mmengine.logging.history_buffer.HistoryBuffer'),
    (history_buffer_statistic, 'builtins.getattr'),
    (no_bytes, 'builtins.bytes'),
    (NDARRAY, 'numpy.ndarray'),
    (DTypeRecipe, 'numpy.dtype'),
    *((ArrayRecipe, f'{core}.multiarray._reconstruct') for core in _NUMPY_CORES),
    *((numpy_scalar, f'{core}.multiarray.scalar') for core in _NUMPY_CORES),
]


def resolve_recipes(obj: Any) -> Any:
    """``obj`` with every :class:`Recipe` in it (in dicts and their
    ``_metadata``, lists, tuples, sets, tensors' attributes and recipes' own
    values) replaced by its real value; mutable containers are updated in
    place, shared and cyclic references kept.

    Raises:
        CheckpointValueError: A recipe is not a plain value.
    """
    done: Dict[int, Any] = {}

    def resolve_value(value):
        key = id(value)
        if key in done:
            return done[key]
        if isinstance(value, Recipe):
            done[key] = result = value.resolve(resolve_value)
        elif isinstance(value, dict):
            done[key] = value
            for item_key, item in list(value.items()):
                value[item_key] = resolve_value(item)
            attributes = getattr(value, '__dict__', {})
            if set(attributes) - set(DICT_ATTRIBUTES):
                raise CheckpointValueError(
                    f'a {type(value).__name__} with attributes {sorted(map(str, attributes))} '
                    f'(allowed: {DICT_ATTRIBUTES}, which a state dict has)')
            for name in attributes:
                attributes[name] = resolve_value(attributes[name])
            result = value
        elif isinstance(value, torch.Tensor):
            done[key] = value
            for name, item in list(getattr(value, '__dict__', {}).items()):
                setattr(value, name, resolve_value(item))
            result = value
        elif isinstance(value, list):
            done[key] = value
            value[:] = [resolve_value(item) for item in value]
            result = value
        elif isinstance(value, (tuple, set, frozenset)):
            items = [resolve_value(item) for item in value]
            changed = any(new is not old for new, old in zip(items, value))
            result = (type(value)(items) if changed else value)
            done[key] = result
        else:
            result = value
        return result

    return resolve_value(obj)


def iter_tensors(obj: Any, path: str = '') -> Iterator[Tuple[str, torch.Tensor]]:
    """(``'state_dict.blocks.0.attn.qkv.weight'``-style path, tensor) for each
    tensor in dicts, lists, tuples and sets of ``obj``, each container once."""
    seen = set()
    pending = [(path, obj)]
    while pending:
        where, value = pending.pop()
        if isinstance(value, torch.Tensor):
            yield where or '(the checkpoint)', value
            continue
        if not isinstance(value, (dict, list, tuple, set, frozenset)) or id(value) in seen:
            continue
        seen.add(id(value))
        items = value.items() if isinstance(value, dict) else enumerate(value)
        prefix = f'{where}.' if where else ''
        pending.extend((f'{prefix}{key}', item) for key, item in items)


# Elements whose storage offsets one step of the overlap check computes.
OFFSET_CHUNK = 1 << 20
# Elements the overlap checks of one checkpoint may compute, per byte of its
# tensors' storages (a view's elements are at most its storage's).
OFFSETS_PER_STORAGE_BYTE = 4


def _element_offsets(tensor: torch.Tensor, start: int, stop: int) -> torch.Tensor:
    """Storage offsets (int64) of ``tensor``'s flat elements ``start`` to ``stop``."""
    index = torch.arange(start, stop)
    offsets = torch.full_like(index, tensor.storage_offset())
    for size, stride in reversed(list(zip(tensor.shape, tensor.stride()))):
        offsets += index % size * stride
        index = index.div(size, rounding_mode='floor')
    return offsets


def _shares_memory(tensor: torch.Tensor, budget: List[int]) -> bool:
    """Whether two elements of a strided ``tensor`` lie at one storage offset,
    drawing the elements it computes offsets of from ``budget[0]``.

    Raises:
        CheckpointValueError: The check would exceed ``budget[0]``.
    """
    spans = sorted(
        (stride, size) for size, stride in zip(tensor.shape, tensor.stride()) if size > 1)
    reach = 1
    for stride, size in spans:
        if stride < reach:
            break
        reach = stride * size
    else:
        return False  # each dimension steps over all the ones below it: no overlap
    numel = tensor.numel()
    if numel > tensor.untyped_storage().nbytes() // tensor.element_size():
        return True  # more elements than the storage holds
    budget[0] -= numel
    if budget[0] < 0:
        raise CheckpointValueError(
            f'views whose strides interleave (shape {tuple(tensor.shape)}, strides '
            f'{tensor.stride()}) that would take more than {OFFSETS_PER_STORAGE_BYTE} element '
            "offsets per byte of the checkpoint's storages to check")
    if numel <= OFFSET_CHUNK:
        return _element_offsets(tensor, 0, numel).unique().numel() < numel
    span = 1 + sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()))
    taken = torch.zeros(span, dtype=torch.bool)
    for start in range(0, numel, OFFSET_CHUNK):
        offsets = _element_offsets(tensor, start, min(start + OFFSET_CHUNK, numel))
        offsets -= tensor.storage_offset()
        if taken[offsets].any() or offsets.unique().numel() < offsets.numel():
            return True
        taken[offsets] = True
    return False


def _has_strided_storage(tensor: torch.Tensor) -> bool:
    return tensor.layout == torch.strided and not (tensor.is_meta or tensor.is_nested)


def tensor_data_problem(tensor: torch.Tensor,
                        allow_shared: bool = False,
                        budget: Optional[List[int]] = None) -> Optional[str]:
    """What keeps ``tensor`` from holding data of its own (None if nothing):
    a meta tensor, or (unless ``allow_shared``) elements that share memory,
    as a stride-0 expanded view's do. (Elements beyond the storage torch's
    rebuild refuses.) ``budget``: see :func:`_shares_memory` (default: the
    tensor's own storage bytes times ``OFFSETS_PER_STORAGE_BYTE``)."""
    if tensor.is_meta:
        return 'is a meta tensor (a shape without data)'
    if allow_shared or not _has_strided_storage(tensor) or tensor.numel() == 0:
        return None
    if budget is None:
        budget = [OFFSETS_PER_STORAGE_BYTE * tensor.untyped_storage().nbytes()]
    if not _shares_memory(tensor, budget):
        return None
    return (f'has elements that share memory (shape {tuple(tensor.shape)}, strides '
            f'{tensor.stride()}): an expanded view, not data of its own')


def check_tensors(obj: Any, allow_shared: bool = False) -> None:
    """Refuse a loaded checkpoint with a tensor that holds no data of its own
    (:func:`tensor_data_problem`); each view is checked once however often
    the checkpoint refers to it, all within ``OFFSETS_PER_STORAGE_BYTE``
    offsets per byte of the checkpoint's storages.

    Raises:
        CheckpointValueError: Naming the tensor's path and what is wrong.
    """
    tensors = list(iter_tensors(obj))
    storages = {
        tensor.untyped_storage().data_ptr(): tensor.untyped_storage().nbytes()
        for _, tensor in tensors if _has_strided_storage(tensor)
    }
    budget = [OFFSETS_PER_STORAGE_BYTE * sum(storages.values())]
    checked = set()
    for path, tensor in tensors:
        if _has_strided_storage(tensor):
            view = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(),
                    tuple(tensor.shape), tensor.stride(), tensor.dtype)
            if view in checked:
                continue
            checked.add(view)
        try:
            problem = tensor_data_problem(tensor, allow_shared, budget)
        except CheckpointValueError as err:
            raise CheckpointValueError(f'tensor {path}: {err}') from None
        if problem:
            raise CheckpointValueError(f'tensor {path} {problem}; re-save it with its data '
                                       '(e.g. .contiguous() before torch.save)')
