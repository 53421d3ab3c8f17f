"""Running the command-line tools from tests, and reading what they log."""
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
PLAIN_PATH = '/usr/bin:/bin'  # a fresh shell's PATH: no Python environment activated


def plain_shell_env() -> dict:
    """Variables that make a tool's environment that of a fresh shell: ``PATH``
    without any venv. The shell tools find ``<repo>/.venv`` themselves; when the
    suite runs in another environment, ``MMVITDYN_VENV`` names it, as a user would."""
    env = {'PATH': PLAIN_PATH}
    if Path(sys.prefix).resolve() != (REPO / '.venv').resolve():
        env['MMVITDYN_VENV'] = sys.prefix
    return env


def tool_command(args, env=None):
    """The command line and environment that run ``tools/<args[0]>`` with ``args[1:]``."""
    tool = REPO / 'tools' / args[0]
    cmd = (['bash', str(tool)] if tool.suffix == '.sh' else [sys.executable, str(tool)])
    # Shell tools run <repo>/.venv when it exists, else ``python``: make that this interpreter.
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ['PATH']])
    full_env = {
        **os.environ, 'PATH': path,
        'PYTHONPATH': str(REPO),
        'OMP_NUM_THREADS': '1',
        **(env or {})
    }
    return cmd + [str(a) for a in args[1:]], full_env


def load_tool(path: str) -> ModuleType:
    """``tools/<path>`` imported as a module, to call its ``main(argv)`` in-process;
    its folder is on ``sys.path`` while it loads, as when it runs as a script."""
    file = REPO / 'tools' / path
    spec = importlib.util.spec_from_file_location(file.stem, file)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(file.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(file.parent))
    return module


def run_tool(args, cwd, env=None, check=True) -> subprocess.CompletedProcess:
    """Run ``python tools/<args[0]> ...`` (or a .sh tool) in ``cwd``; return its output."""
    cmd, full_env = tool_command(args, env)
    proc = subprocess.run(cmd, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError(f'{args[0]} exited {proc.returncode}\n'
                             f'--- stdout ---\n{proc.stdout[-6000:]}\n'
                             f'--- stderr ---\n{proc.stderr[-6000:]}')
    return proc


def start_tool(args, cwd, env=None, **popen_kwargs) -> subprocess.Popen:
    """Start ``tools/<args[0]>`` in ``cwd``; by default its stdout and stderr go, merged,
    to a text pipe (``popen_kwargs`` override)."""
    cmd, full_env = tool_command(args, {'PYTHONUNBUFFERED': '1', **(env or {})})
    kwargs = {'stdout': subprocess.PIPE, 'stderr': subprocess.STDOUT, 'text': True, **popen_kwargs}
    return subprocess.Popen(cmd, cwd=cwd, env=full_env, **kwargs)


def logged_metrics(text: str) -> dict:
    """``name: value`` pairs of the last ``Epoch(test)``/``Iter(test)`` log line."""
    lines = [line for line in text.splitlines() if '(test)' in line]
    assert lines, f'no test metrics logged:\n{text[-3000:]}'
    return {k: float(v) for k, v in re.findall(r'([\w/]+): (-?[\d.]+)', lines[-1])}


def logged_test_scalars(work_dir: Path) -> dict:
    """The scalars of the newest ``tools/test.py`` run in ``work_dir``, from its JSON
    log (full precision, unlike the printed line)."""
    logs = sorted(Path(work_dir).glob('*/*.json'))
    assert logs, f'no JSON log under {work_dir}'
    return json.loads(logs[-1].read_text().splitlines()[-1])
