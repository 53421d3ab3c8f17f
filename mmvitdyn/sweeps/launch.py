"""Starting a sweep's cells: each cell's command line and a pool that runs them."""
import os
import os.path as osp
import shlex
import subprocess
import threading
import time
from queue import Empty, Queue
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..utils import dump_json_atomically, remove_orphaned_temporaries
from .sweep_file import Cell, Launcher

# What the sweep writes into a cell's work dir: the cell's output, and how it ended.
CELL_LOG = 'sweep.log'
EXIT_RECORD = 'sweep_exit.json'


def cell_command(cell: Cell, launcher: Launcher, root: str, python: str,
                 resume: bool) -> Tuple[List[str], Dict[str, str]]:
    """The command that trains ``cell`` and the variables it sets.

    ``tools/train.py``, ``tools/dist_train.sh`` or ``tools/slurm_train.sh`` as
    ``launcher.type`` says (docs/sweeps.md), then ``--cfg-options`` and, with
    ``resume``, ``--resume``; paths relative to the working directory where they
    lie under it.
    """
    tools = _short(osp.join(root, 'tools'))
    config = _short(osp.join(root, cell.config))
    extra = (['--cfg-options', *cell.options] if cell.options else []) + (['--resume']
                                                                          if resume else [])
    if launcher.type == 'local':
        return [python,
                osp.join(tools, 'train.py'), config, '--work-dir', cell.work_dir, *extra], {}
    if launcher.type == 'pytorch':
        return [
            'bash',
            osp.join(tools, 'dist_train.sh'), config,
            str(launcher.gpus), '--work-dir', cell.work_dir, *extra
        ], {}
    env = dict(
        GPUS=str(launcher.gpus),
        GPUS_PER_NODE=str(launcher.gpus_per_node),
        CPUS_PER_TASK=str(launcher.cpus_per_task),
        SRUN_ARGS=launcher.srun_args)
    return [
        'bash',
        osp.join(tools, 'slurm_train.sh'), launcher.partition, cell.name, config, cell.work_dir,
        *extra
    ], env


def slot_env(launcher: Launcher, slot: int) -> Dict[str, str]:
    """Variables of the ``slot``-th of the ``max_parallel`` cells running at
    once: under 'pytorch', its own master ``PORT`` and, when several run at
    once, its own ``gpus`` GPUs (``CUDA_VISIBLE_DEVICES``)."""
    if launcher.type != 'pytorch':
        return {}
    env = dict(PORT=str(launcher.port + slot))
    if launcher.max_parallel > 1:
        first = slot * launcher.gpus
        env['CUDA_VISIBLE_DEVICES'] = ','.join(map(str, range(first, first + launcher.gpus)))
    return env


def shell_line(argv: Sequence[str], env: Dict[str, str]) -> str:
    """``argv`` with ``env`` as a line a shell runs as typed."""
    return ' '.join([f'{key}={shlex.quote(value)}'
                     for key, value in env.items()] + [shlex.quote(arg) for arg in argv])


def _short(path: str) -> str:
    relative = osp.relpath(path)
    return path if relative.startswith('..') else relative


def run_cells(cells: Sequence[Cell],
              launcher: Launcher,
              command: Callable[[Cell], Tuple[List[str], Dict[str, str]]],
              report: Callable[[str, Cell, str], None],
              env: Optional[Dict[str, str]] = None) -> Dict[str, int]:
    """Run ``cells``, ``launcher.max_parallel`` at a time, each in its own process group.

    A cell's output goes to ``<work_dir>/sweep.log``, how it ended to
    ``<work_dir>/sweep_exit.json``; the temporary files of saves it did not finish
    are removed when it ends. A ``KeyboardInterrupt`` (or a SIGTERM the tool turns
    into one) stops the running cells (SIGTERM to their process groups), records
    them, starts no more and is raised again.

    Args:
        cells (Sequence[Cell]): The cells to run, in order.
        launcher (Launcher): Its ``max_parallel`` and slot variables.
        command (Callable): Cell -> (argv, variables).
        report (Callable): Called with ('start' | 'end', cell, text).
        env (dict, optional): The environment of the cells. Defaults to
            None (this process's).

    Returns:
        dict: Cell name -> exit code, for the cells that ended.
    """
    todo, codes, lock = Queue(), {}, threading.Lock()
    running: Dict[str, subprocess.Popen] = {}
    stop = threading.Event()
    for cell in cells:
        todo.put(cell)

    def run_queue(slot: int) -> None:
        while not stop.is_set():
            try:
                cell = todo.get_nowait()
            except Empty:
                return
            argv, variables = command(cell)
            variables = {**variables, **slot_env(launcher, slot)}
            with lock:
                if stop.is_set():
                    return
                os.makedirs(cell.work_dir, exist_ok=True)
                if osp.isfile(osp.join(cell.work_dir, EXIT_RECORD)):
                    os.remove(osp.join(cell.work_dir, EXIT_RECORD))
                report('start', cell, shell_line(argv, variables))
                started = time.time()
                inherited = {**os.environ} if env is None else env
                with open(osp.join(cell.work_dir, CELL_LOG), 'w') as log:
                    proc = subprocess.Popen(
                        argv,
                        env={
                            **inherited,
                            **variables
                        },
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True)
                running[cell.name] = proc
            code = proc.wait()
            with lock:
                del running[cell.name]
                codes[cell.name] = code
                dump_json_atomically(
                    dict(returncode=code, seconds=round(time.time() - started, 1), argv=argv),
                    osp.join(cell.work_dir, EXIT_RECORD))
                removed = remove_orphaned_temporaries(cell.work_dir)
                report(
                    'end', cell, f'exit code {code}, {time.time() - started:.0f} s' +
                    ''.join(f'; removed {path.name}, a save it did not finish' for path in removed))

    workers = [
        threading.Thread(target=run_queue, args=(slot, ), daemon=True)
        for slot in range(launcher.max_parallel)
    ]

    def wait_for_workers() -> None:
        # Polled with sleep: a KeyboardInterrupt inside Thread.join can leave
        # the thread looking finished while it still waits for its cell.
        while any(worker.is_alive() for worker in workers):
            time.sleep(0.1)

    try:  # from the first start: an interrupt right after a launch stops it too
        for worker in workers:
            worker.start()
        wait_for_workers()
    except KeyboardInterrupt:
        stop.set()
        with lock:
            for proc in running.values():
                _stop_group(proc)
        wait_for_workers()
        raise
    return codes


def _stop_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, 15)
    except ProcessLookupError:
        pass
