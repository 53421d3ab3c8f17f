"""Configs that a checkpoint stores as Python text, kept as data and never run
(:func:`keep_stored_configs_as_data`; why: docs/checkpoints.md)."""
import ast
import math
from typing import Any, Dict, Optional, Sequence, Tuple

from mmengine.logging import print_log

#: Where a Runner checkpoint stores config text: key paths from its top level.
STORED_CONFIG_FIELDS: Tuple[Tuple[str, ...], ...] = (
    ('meta', 'config'),
    ('meta', 'cfg'),
    ('message_hub', 'runtime_info', 'cfg'),
)
#: Config keys that make mmengine read other files or import modules.
LOADING_KEYS = ('_base_', 'custom_imports')
#: What opens the placeholders mmengine substitutes in a config's text
#: (``{{ $ENV:default }}``, ``{{ fileDirname }}``, ``{{ _base_.key }}``).
SUBSTITUTED = '{{'
#: The registry scopes a stored config may name: mmengine imports
#: ``<scope>.registry`` for a ``type='<scope>.Name'``, a ``_scope_`` or a
#: ``default_scope``, so any other would import a module the file chose.
KNOWN_SCOPES = ('mmengine', 'mmcv', 'mmpretrain', 'mmdet', 'mmseg', 'mmaction', 'mmvitdyn')


class NotPlainDataError(ValueError):
    """A config text that is more than assignments of plain values."""


def _value(node: ast.AST) -> Any:
    """The plain value an expression node writes out (nothing is evaluated)."""
    if isinstance(node, ast.Constant) and isinstance(node.value,
                                                     (str, bytes, int, float, bool, type(None))):
        if isinstance(node.value, float) and not math.isfinite(node.value):
            raise NotPlainDataError(f'line {node.lineno}: a non-finite number')
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _value(node.operand)
        if isinstance(operand, bool) or not isinstance(operand, (int, float)):
            raise NotPlainDataError(f'line {node.lineno}: a sign before a non-number')
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_value(item) for item in node.elts]
        return {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](items)
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_value(key): _value(item) for key, item in zip(node.keys, node.values)}
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == 'dict'
            and len(node.args) <= 1 and all(keyword.arg for keyword in node.keywords)):
        # dict(key=value) and dict({'key': value}), as mmengine writes non-identifier keys
        mapping = _value(node.args[0]) if node.args else {}
        if not isinstance(mapping, dict):
            raise NotPlainDataError(f'line {node.lineno}: dict() of a {type(mapping).__name__}')
        return {**mapping, **{keyword.arg: _value(keyword.value) for keyword in node.keywords}}
    raise NotPlainDataError(f'line {getattr(node, "lineno", "?")}: {type(node).__name__} '
                            f'{ast.unparse(node)[:60]!r} is not a plain value')


def parse_config_text(text: str, names: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """The assignments of a Python config text as a dict, read without running it.

    Args:
        text (str): The config's Python text.
        names (Sequence[str], optional): Read only the assignments to these
            names and pass over every other statement. Defaults to None
            (every statement, each an assignment of plain data).

    Raises:
        NotPlainDataError: A statement read is not ``name = <plain value>``;
            the message gives the line.
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        raise NotPlainDataError(f'not readable Python: {type(err).__name__}') from None
    config = {}
    for statement in tree.body:
        assigned = [
            target.id for target in getattr(statement, 'targets', [])
            if isinstance(target, ast.Name)
        ]
        if names is not None and not set(assigned) & set(names):
            continue
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            raise NotPlainDataError(f'line {statement.lineno}: a {type(statement).__name__} '
                                    'statement, not an assignment to a name')
        try:
            config[statement.targets[0].id] = _value(statement.value)
        except RecursionError:
            raise NotPlainDataError(f'line {statement.lineno}: nested too deeply') from None
        except TypeError as err:  # an unhashable dict key or set item
            raise NotPlainDataError(f'line {statement.lineno}: {err}') from None
    return config


def check_scopes(value: Any, where: str = '') -> None:
    """Refuse a scope outside :data:`KNOWN_SCOPES` anywhere in ``value``: the
    prefix of a dotted ``type``, a ``_scope_``, a ``default_scope``.

    Raises:
        NotPlainDataError: Naming the key path and the scope.
    """
    if isinstance(value, dict):
        for key, item in value.items():
            path = f'{where}.{key}' if where else str(key)
            scope = None
            if key == 'type' and isinstance(item, str) and '.' in item:
                scope = item.split('.')[0]
            elif key in ('_scope_', 'default_scope') and isinstance(item, str):
                scope = item
            if scope is not None and scope not in KNOWN_SCOPES:
                raise NotPlainDataError(
                    f'{path}={item!r} names the registry scope {scope!r}, which mmengine '
                    f'would import as a module (known scopes: {", ".join(KNOWN_SCOPES)})')
            check_scopes(item, path)
    elif isinstance(value, (list, tuple, set)):
        for index, item in enumerate(value):
            check_scopes(item, f'{where}[{index}]')


def config_text(config: Dict[str, Any]) -> str:
    """Python text that assigns ``config``'s plain values, less :data:`LOADING_KEYS`.

    Raises:
        NotPlainDataError: The text would hold ``{{``, or a value has no literal
            (an int beyond Python's digit limit).
    """
    try:
        text = ''.join(f'{key} = {value!r}\n' for key, value in config.items()
                       if key not in LOADING_KEYS)
    except ValueError as err:
        raise NotPlainDataError(f'a value has no literal: {err}') from None
    if SUBSTITUTED in text:
        raise NotPlainDataError(f'it holds {SUBSTITUTED!r}, which mmengine substitutes in a '
                                "config's text before running it")
    return text


def keep_stored_configs_as_data(checkpoint: Any, name: str) -> Any:
    """``checkpoint`` with each config text it stores (:data:`STORED_CONFIG_FIELDS`)
    replaced by its plain data written out again (:func:`config_text`), or
    removed, with a warning naming ``name`` and the field, if it is not
    plain data."""
    for field in STORED_CONFIG_FIELDS:
        owner = checkpoint
        for key in field[:-1]:
            owner = owner.get(key) if isinstance(owner, dict) else None
        if not isinstance(owner, dict) or field[-1] not in owner:
            continue
        stored = owner[field[-1]]
        try:
            if not isinstance(stored, str):
                raise NotPlainDataError(f'a {type(stored).__name__}, not text')
            config = parse_config_text(stored)
            check_scopes(config)
            owner[field[-1]] = config_text(config)
        except NotPlainDataError as err:
            del owner[field[-1]]
            print_log(
                f'checkpoint {name}: its stored config {".".join(field)} is not plain data '
                f'({err}) and was left out; a config stored in a checkpoint is never run. '
                'Pass the config file itself where one is needed.',
                logger='current',
                level=30)
    return checkpoint
