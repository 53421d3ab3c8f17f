"""Memory a checkpoint's pickle makes from nothing, found before it is unpickled.

:func:`scan_pickle` reads the opcodes (:mod:`pickletools`, which executes
nothing), follows the stack and memo abstractly, and refuses the uses of
``bytearray``, ``_codecs.encode`` and the tensor classes that no checkpoint has,
and a total of made bytes beyond the budget (docs/checkpoints.md).
"""
import _compat_pickle
import pickletools
import re
from typing import BinaryIO, List, Optional

LATIN1 = ('latin1', 'latin-1')
# torch's tensor classes (torch.Tensor, torch.FloatTensor, torch.cuda.HalfTensor, ...).
TENSOR_CLASS = re.compile(r'^torch(\.cuda|\.sparse)?\.\w*Tensor$')
MAX_KEPT_TEXT = 64  # longer strings are kept as their length only


class PickleBudgetError(Exception):
    """The pickle makes memory the file does not hold; the message says how.

    ``over_budget`` tells a total beyond the budget (which the user may raise)
    from a use of a callable that no checkpoint has.
    """

    def __init__(self, message: str, over_budget: bool = False):
        super().__init__(message)
        self.over_budget = over_budget


class Text:
    """A str on the abstract stack: its value if short, always its length."""

    def __init__(self, value: str):
        self.length = len(value)
        self.value = value if len(value) <= MAX_KEPT_TEXT else None


class Made:
    """bytes or bytearray of ``length`` made by a call (or a literal)."""

    def __init__(self, length: int):
        self.length = length


class Global:
    """A name the pickle imports."""

    def __init__(self, module: str, name: str):
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        self.name = f'{module}.{name}'


class Items:
    """A tuple of up to 4 abstract values (longer ones are opaque)."""

    def __init__(self, items: list):
        self.items = items


OPAQUE = object()
MARK = object()
TUPLE_SIZES = {'TUPLE1': 1, 'TUPLE2': 2, 'TUPLE3': 3, 'EMPTY_TUPLE': 0}


def _made_by(func: Global, args, kind: str) -> Optional[int]:
    """Bytes a call of ``func`` with ``args`` makes (None: nothing counted);
    raises :class:`PickleBudgetError` for a use a checkpoint never has."""
    items = args.items if isinstance(args, Items) else None
    if func.name == '_codecs.encode':
        if (items is not None and len(items) == 2 and isinstance(items[0], Text)
                and isinstance(items[1], Text) and items[1].value in LATIN1):
            return items[0].length
        raise PickleBudgetError('_codecs.encode other than (text, "latin1"), the form of '
                                'bytes in a pickle (another codec expands its input)')
    if func.name == 'builtins.bytearray':
        if items == []:
            return 0
        if items and isinstance(items[0],
                                (Made, Text)) and (len(items) == 1 or
                                                   (len(items) == 2 and isinstance(items[1], Text)
                                                    and items[1].value in LATIN1)):
            return items[0].length
        raise PickleBudgetError('bytearray of a size rather than of bytes (n zeroed bytes from '
                                'a number)')
    if TENSOR_CLASS.match(func.name) and items != []:
        raise PickleBudgetError(f'{func.name} called ({kind}) with arguments: a tensor of a '
                                'declared size that the file holds no data for')
    return None


def scan_pickle(stream: BinaryIO, budget: float) -> int:
    """Read one pickle from ``stream`` (up to its STOP) and return the bytes its
    calls make; raises :class:`PickleBudgetError` past ``budget`` or for a
    use of the callables above that a checkpoint never has."""
    stack: List = []
    metastack: List[List] = []
    memo = {}
    made = 0
    for opcode, arg, _ in pickletools.genops(stream):
        name = opcode.name
        if name in ('BINUNICODE', 'SHORT_BINUNICODE', 'BINUNICODE8', 'UNICODE'):
            stack.append(Text(arg))
        elif name in ('BINBYTES', 'SHORT_BINBYTES', 'BINBYTES8', 'BYTEARRAY8'):
            stack.append(Made(len(arg)))
        elif name == 'GLOBAL':
            module, _, attr = arg.partition(' ')
            stack.append(Global(module, attr))
        elif name == 'MARK':
            metastack.append(stack)
            stack = []
        elif name in ('TUPLE', 'FROZENSET', 'POP_MARK'):
            items, stack = stack, metastack.pop() if metastack else []
            if name != 'POP_MARK':
                stack.append(Items(items) if name == 'TUPLE' and len(items) <= 4 else OPAQUE)
        elif name in TUPLE_SIZES:
            size = TUPLE_SIZES[name]
            items = stack[len(stack) - size:] if size else []
            del stack[len(stack) - size:]
            stack.append(Items(items))
        elif name in ('BINPUT', 'LONG_BINPUT', 'PUT'):
            memo[arg] = stack[-1] if stack else OPAQUE
        elif name == 'MEMOIZE':
            memo[len(memo)] = stack[-1] if stack else OPAQUE
        elif name in ('BINGET', 'LONG_BINGET', 'GET'):
            stack.append(memo.get(arg, OPAQUE))
        elif name in ('REDUCE', 'NEWOBJ'):
            args = stack.pop() if stack else OPAQUE
            func = stack.pop() if stack else OPAQUE
            count = _made_by(func, args, name) if isinstance(func, Global) else None
            made += count or 0
            stack.append(OPAQUE if count is None else Made(count))
        elif name == 'STOP':
            break
        else:  # everything else by its declared stack effect, as opaque values
            before = opcode.stack_before
            if pickletools.markobject in before:
                stack = metastack.pop() if metastack else []
                before = before[:before.index(pickletools.markobject)]
            del stack[max(0, len(stack) - len(before)):]
            stack.extend(OPAQUE for _ in opcode.stack_after)
        if made > budget:
            raise PickleBudgetError(
                f'its calls make {made} bytes, beyond the bound of '
                f'{budget:.0f}',
                over_budget=True)
    return made
