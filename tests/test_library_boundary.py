"""The library returns values and raises errors; command lines belong to ``tools/``."""
import ast

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
# policy, set (unless the user set it) before torch loads, for every process
# that imports mmvitdyn (mmvitdyn/openmp_wait.py, docs/benchmarks.md).
OPENMP_WAIT = REPO / 'mmvitdyn' / 'openmp_wait.py'


@pytest.mark.parametrize(
    'path', [p for p in SOURCES if p != OPENMP_WAIT],
    ids=lambda p: str(p.relative_to(REPO / 'mmvitdyn')))
def test_the_library_parses_no_command_line_and_writes_no_environment(path):
    assert command_line_uses(ast.parse(path.read_text())) == []


def test_the_wait_policy_is_the_one_environment_write_and_keeps_the_user_s_value():
    tree = ast.parse(OPENMP_WAIT.read_text())
    assert [use.split(': ')[1] for use in command_line_uses(tree)] == ['writes os.environ']
    writes = [
        node for node in ast.walk(tree) if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute) and is_environ(node.func.value)
    ]
    assert [call.func.attr for call in writes] == ['setdefault']


def test_the_check_finds_what_it_looks_for():
    tree = ast.parse('import argparse\nimport os\nos.environ["A"] = "1"\n'
                     'os.environ.setdefault("B", "2")\ndel os.environ["A"]\n')
    assert command_line_uses(tree) == [
        'line 1: imports argparse', 'line 3: writes os.environ', 'line 4: writes os.environ',
        'line 5: writes os.environ'
    ]
