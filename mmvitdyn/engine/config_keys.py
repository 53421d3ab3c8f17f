"""Misspelt config keys, named as the user wrote them, with the key they meant:
top-level keys one typo from a key the Runner reads, and unknown arguments of a
registered class named with the class the config wrote (docs/design_notes.md)."""
import difflib
import inspect
import re
from typing import Iterator, List, Optional, Tuple

from mmengine.config import Config
from mmengine.registry import Registry
from mmengine.runner import Runner

# Top-level keys the Runner and OpenMMLab's tools read besides Runner's arguments.
TOOL_KEYS = ('runner_type', 'custom_imports', 'tta_model', 'tta_pipeline')
# Variables OpenMMLab's configs define by convention: never taken for a typo.
CONVENTIONS = ('train_pipeline', 'val_pipeline', 'test_pipeline', 'vis_backends', 'backend_args',
               'data_root', 'dataset_type')
UNEXPECTED = re.compile(r"got an unexpected keyword argument '(\w+)'")


def runner_keys() -> List[str]:
    """The top-level config keys that something reads."""
    arguments = [name for name in inspect.signature(Runner.__init__).parameters if name != 'self']
    return sorted({*arguments, *TOOL_KEYS})


def misspelt_top_level_keys(cfg: Config) -> List[Tuple[str, str]]:
    """(key, the Runner key it is close to) for each top-level key of ``cfg``
    that nothing reads and that differs from a read key by about one typo."""
    known = runner_keys()
    found = []
    for key in cfg.keys():
        if key in known or key in CONVENTIONS or key.startswith('_'):
            continue
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.85)
        if close:
            found.append((key, close[0]))
    return found


def init_arguments(cls: type) -> List[str]:
    """The keyword arguments ``cls(...)`` accepts: those of each ``__init__`` up
    its MRO while the one below passes ``**kwargs`` on."""
    names = []
    for klass in cls.__mro__:
        init = klass.__dict__.get('__init__')
        if init is None:
            continue
        parameters = list(inspect.signature(init).parameters.values())[1:]
        names += [p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if not any(p.kind == p.VAR_KEYWORD for p in parameters):
            break
    return sorted(set(names))


def dicts_with_key(node, key: str, field: str) -> Iterator[Tuple[str, dict]]:
    """(field, settings) of each dict under ``node`` that has a ``type`` and ``key``."""
    if isinstance(node, dict):
        if 'type' in node and key in node:
            yield field, node
        for name, value in node.items():
            yield from dicts_with_key(value, key, f'{field}.{name}' if field else name)
    elif isinstance(node, (list, tuple)):
        for index, value in enumerate(node):
            yield from dicts_with_key(value, key, f'{field}[{index}]')


def resolve_type(settings: dict, registries: List[Registry]) -> Optional[type]:
    """The class ``settings['type']`` names in the first of ``registries`` that has it."""
    kind = settings['type']
    if isinstance(kind, type):
        return kind
    for registry in registries:
        cls = registry.get(kind)
        if cls is not None:
            return cls
    return None


def unknown_argument_message(cfg: Config, error: Exception,
                             registries: List[Registry]) -> Optional[str]:
    """What to say for ``error`` when it is a config's unknown keyword: the
    field, the class the config names, the close argument; None otherwise."""
    match = UNEXPECTED.search(str(error))
    if match is None:
        return None
    key = match.group(1)
    for field, settings in dicts_with_key(cfg.to_dict(), key, ''):
        cls = resolve_type(settings, registries)
        if cls is None:
            continue
        arguments = init_arguments(cls)
        if key in arguments:
            continue
        close = difflib.get_close_matches(key, arguments, n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else ''
        return (f"{field}.{key}: {cls.__name__} has no argument {key!r}{hint} "
                f"Its arguments: {', '.join(arguments)}")
    return None
