"""Running the command-line tools from tests, and reading what they log."""
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_tool(args, cwd, env=None, check=True) -> subprocess.CompletedProcess:
    """Run ``python tools/<args[0]> ...`` (or a .sh tool) in ``cwd``; return its output."""
    tool = REPO / 'tools' / args[0]
    cmd = (['bash', str(tool)] if tool.suffix == '.sh' else [sys.executable, str(tool)])
    # Shell tools call ``python``: make it this interpreter (the venv's).
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ['PATH']])
    full_env = {**os.environ, 'PATH': path, 'PYTHONPATH': str(REPO), 'OMP_NUM_THREADS': '1',
                **(env or {})}
    proc = subprocess.run(cmd + [str(a) for a in args[1:]], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError(f'{args[0]} exited {proc.returncode}\n'
                             f'--- stdout ---\n{proc.stdout[-6000:]}\n'
                             f'--- stderr ---\n{proc.stderr[-6000:]}')
    return proc


def logged_metrics(text: str) -> dict:
    """``name: value`` pairs of the last ``Epoch(test)``/``Iter(test)`` log line."""
    lines = [line for line in text.splitlines() if '(test)' in line]
    assert lines, f'no test metrics logged:\n{text[-3000:]}'
    return {k: float(v) for k, v in re.findall(r'([\w/]+): (-?[\d.]+)', lines[-1])}
