"""The code passes OpenMMLab's lint set-up (flake8, isort, yapf; setup.cfg)."""
import subprocess
import sys

import pytest

from helpers.tools import REPO

SOURCES = ['mmvitdyn', 'tools', 'tests', 'demo', 'configs', 'setup.py']


@pytest.mark.parametrize(
    'command', [
        ['flake8', *SOURCES],
        ['isort', '--check-only', '--diff', *SOURCES],
        ['yapf', '--diff', '--recursive', *SOURCES],
    ],
    ids=['flake8', 'isort', 'yapf'])
def test_lint(command):
    proc = subprocess.run([sys.executable, '-m', *command],
                          cwd=REPO,
                          capture_output=True,
                          text=True)
    assert proc.returncode == 0 and not proc.stdout.strip(), (
        f'{command[0]} found problems (fix with: isort . && yapf -i -r {" ".join(SOURCES)}):\n'
        f'{proc.stdout[-5000:]}{proc.stderr[-2000:]}')
