"""The library returns values and raises errors; command lines belong to ``tools/``."""
import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.tools import REPO

SOURCES = sorted((REPO / 'mmvitdyn').rglob('*.py'))
ENVIRON_WRITES = {'setdefault', 'update', 'pop', 'clear', '__setitem__', '__delitem__'}


def is_environ(node: ast.AST) -> bool:
    """Whether ``node`` is ``os.environ``."""
    return (isinstance(node, ast.Attribute) and node.attr == 'environ'
            and isinstance(node.value, ast.Name) and node.value.id == 'os')


def command_line_uses(tree: ast.AST) -> list:
    """argparse imports and writes to ``os.environ`` in a module's syntax tree."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + [getattr(node, 'module', None) or '']
            found += [
                f'line {node.lineno}: imports argparse' for n in names
                if n.split('.')[0] == 'argparse'
            ]
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            found += [
                f'line {node.lineno}: writes os.environ' for t in targets
                if isinstance(t, ast.Subscript) and is_environ(t.value)
            ]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ENVIRON_WRITES and is_environ(node.func.value)):
            found.append(f'line {node.lineno}: writes os.environ')
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == 'putenv'):
            found.append(f'line {node.lineno}: putenv')
    return sorted(found, key=lambda text: int(text.split()[1].rstrip(":")))


# The one environment write the library makes on purpose: OpenMP's wait
# policy and libgomp's spin count, set (unless the user set them) before torch
# loads, for every process that imports mmvitdyn (mmvitdyn/openmp_wait.py, docs/benchmarks.md).
OPENMP_WAIT = REPO / 'mmvitdyn' / 'openmp_wait.py'


@pytest.mark.parametrize(
    'path', [p for p in SOURCES if p != OPENMP_WAIT],
    ids=lambda p: str(p.relative_to(REPO / 'mmvitdyn')))
def test_the_library_parses_no_command_line_and_writes_no_environment(path):
    assert command_line_uses(ast.parse(path.read_text())) == []


def test_the_wait_policy_is_the_one_environment_write_and_keeps_the_user_s_value():
    tree = ast.parse(OPENMP_WAIT.read_text())
    assert [use.split(': ')[1] for use in command_line_uses(tree)] == ['writes os.environ'] * 2
    writes = [
        node for node in ast.walk(tree) if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute) and is_environ(node.func.value)
    ]
    assert [call.func.attr for call in writes] == ['setdefault', 'setdefault']


def test_the_check_finds_what_it_looks_for():
    tree = ast.parse('import argparse\nimport os\nos.environ["A"] = "1"\n'
                     'os.environ.setdefault("B", "2")\ndel os.environ["A"]\n')
    assert command_line_uses(tree) == [
        'line 1: imports argparse', 'line 3: writes os.environ', 'line 4: writes os.environ',
        'line 5: writes os.environ'
    ]


# Command-line glue shared by tools in several folders; nothing else in the library imports it.
CLI = REPO / 'mmvitdyn' / 'cli'
# The package's modules (not the pointer scripts an editable install writes into .mim/).
PACKAGE = [p for p in SOURCES if '.mim' not in p.relative_to(REPO).parts]
LIBRARY = [p for p in PACKAGE if CLI not in p.parents]
PARSER_CALLS = {'add_argument', 'add_argument_group', 'add_mutually_exclusive_group', 'parse_args'}
OPTION_KEYWORDS = {'nargs', 'metavar', 'action', 'choices'}


def command_line_specs(tree: ast.AST) -> list:
    """Option specs in a module's syntax tree: calls of a parser's methods
    (:data:`PARSER_CALLS`, ``parser.error``) and ``dict(help=..., nargs=...)``
    (``add_argument`` keywords)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and (func.attr in PARSER_CALLS or
                                                (func.attr == 'error'
                                                 and isinstance(func.value, ast.Name)
                                                 and func.value.id == 'parser')):
            found.append(f'line {node.lineno}: calls {func.attr}')
        keywords = {keyword.arg for keyword in node.keywords}
        if (isinstance(func, ast.Name) and func.id == 'dict' and 'help' in keywords
                and keywords & OPTION_KEYWORDS):
            found.append(f'line {node.lineno}: an add_argument spec')
    return sorted(found, key=lambda text: int(text.split()[1].rstrip(':')))


def module_name(path) -> str:
    parts = path.relative_to(REPO).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


IMPORT_THE_LIBRARY = """
import json, sys
from importlib import import_module
for name in sys.argv[1:]:
    import_module(name)
print(json.dumps({name: getattr(module, '__file__', None) for name, module in sys.modules.items()
                  if name == 'mmvitdyn' or name.startswith('mmvitdyn.')}))
"""


def test_the_library_imports_without_any_command_line_glue():
    """Every module outside ``mmvitdyn/cli`` (``mmvitdyn.apis`` included), imported
    in a fresh process, loads no module of ``mmvitdyn/cli`` and none that holds an
    option spec."""
    names = ['mmvitdyn', 'mmvitdyn.apis', *map(module_name, LIBRARY)]
    proc = subprocess.run([sys.executable, '-c', IMPORT_THE_LIBRARY, *names],
                          cwd=REPO,
                          capture_output=True,
                          text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    loaded = json.loads(proc.stdout.splitlines()[-1])
    assert set(names) <= set(loaded)
    assert [name for name in loaded
            if name == 'mmvitdyn.cli' or name.startswith('mmvitdyn.cli.')] == []
    specs = {
        name: command_line_specs(ast.parse(Path(file).read_text()))
        for name, file in loaded.items() if file is not None
    }
    assert {name: found for name, found in specs.items() if found} == {}


def test_the_option_spec_check_finds_what_it_looks_for():
    tree = ast.parse("OPTION = dict(nargs='*', help='h')\nNOT_ONE = dict(help='h')\n"
                     "parser.add_argument('--a')\nparser.error('x')\nlog.error('x')\n")
    assert command_line_specs(tree) == [
        'line 1: an add_argument spec', 'line 3: calls add_argument', 'line 4: calls error'
    ]


# The one module that reads environment variables (each by a function naming it).
SETTINGS = REPO / 'mmvitdyn' / 'settings.py'
ENVIRON_READ_SCAN = sorted(
    [*PACKAGE, *(REPO / 'tools').rglob('*.py'), *(REPO / 'demo').rglob('*.py')])
ENVIRON_NAMES = {'environ', 'environb', 'getenv'}


def environment_reads(tree: ast.AST) -> list:
    """Where a module reads the environment: ``os.getenv``, ``from os import
    environ``, and every ``os.environ`` but one copied whole into a child's
    environment (``{**os.environ, ...}``, ``dict(os.environ, ...)``) or written
    (:func:`command_line_uses`' writes)."""
    passed_on = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            passed_on |= {id(v) for k, v in zip(node.keys, node.values) if k is None}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == 'dict' and node.args:
            passed_on.add(id(node.args[0]))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ENVIRON_WRITES):
            passed_on.add(id(node.func.value))
        if isinstance(node, (ast.Assign, ast.Delete)):
            passed_on |= {id(t.value) for t in node.targets if isinstance(t, ast.Subscript)}
    found = []
    for node in ast.walk(tree):
        if is_environ(node) and id(node) not in passed_on:
            found.append(f'line {node.lineno}: reads os.environ')
        if isinstance(node, ast.Attribute) and node.attr == 'getenv':
            found.append(f'line {node.lineno}: os.getenv')
        imported = {a.name for a in node.names} if isinstance(node, ast.ImportFrom) else set()
        if getattr(node, 'module', None) == 'os' and imported & ENVIRON_NAMES:
            found.append(f'line {node.lineno}: imports the environment')
    return sorted(found, key=lambda text: int(text.split()[1].rstrip(':')))


@pytest.mark.parametrize(
    'path', [p for p in ENVIRON_READ_SCAN if p != SETTINGS], ids=lambda p: str(p.relative_to(REPO)))
def test_environment_variables_are_read_in_mmvitdyn_settings_only(path):
    assert environment_reads(ast.parse(path.read_text())) == []


def test_the_environment_check_finds_what_it_looks_for():
    tree = ast.parse('import os\nfrom os import getenv\nos.environ.get("A")\nos.getenv("B")\n'
                     'x = {**os.environ, "C": "1"}\ny = dict(os.environ, D="1")\n'
                     'os.environ.setdefault("E", "1")\nos.environ["F"] = "1"\n"G" in os.environ\n')
    assert environment_reads(tree) == [
        'line 2: imports the environment', 'line 3: reads os.environ', 'line 4: os.getenv',
        'line 9: reads os.environ'
    ]
