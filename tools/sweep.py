"""Run a sweep: every cell (config x --cfg-options axes) of a sweep file,
each in its own work dir; see docs/sweeps.md.

    python tools/sweep.py SWEEP [--dry-run] [--status] [--check] [--resume]
                          [--max-parallel N]

A cell that is done or running is skipped; the others run (``--resume``:
from their latest checkpoint, as ``tools/train.py --resume``). ``--dry-run``
prints each cell's command and runs nothing; ``--status`` prints each cell's
state (done / running / failed / pending); ``--check`` loads each cell's
config with its options (Config.fromfile + merge_from_dict) and names the
option keys the config does not have. Run it from the repository root.
"""
import argparse
import os.path as osp
import signal
import sys

from mmvitdyn.sweeps import (STATES, SweepError, cell_command, cell_state, load_sweep, run_cells,
                             shell_line, slot_env, unknown_option_keys)
from mmvitdyn.utils import WorkDirLock, WorkDirLockedError

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Run the cells of a sweep file')
    parser.add_argument('sweep', help='sweep file (e.g. configs/sweeps/dyt_vtab1k.py)')
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument('--dry-run', action='store_true', help="print each cell's command")
    mode.add_argument('--status', action='store_true', help="print each cell's state")
    mode.add_argument(
        '--check', action='store_true', help="load each cell's config with its options")
    parser.add_argument(
        '--resume', action='store_true', help='resume unfinished cells from their checkpoints')
    parser.add_argument('--max-parallel', type=int, help='cells at once (overrides the file)')
    return parser, parser.parse_args(argv)


def stop_on_sigterm(*_) -> None:
    """SIGTERM stops the sweep as Ctrl-C does (its running cells are stopped too)."""
    raise KeyboardInterrupt


def main(argv=None):
    parser, args = parse_args(argv)
    try:
        sweep = load_sweep(args.sweep, REPO, args.max_parallel)
    except SweepError as err:
        parser.error(str(err))
    states = {cell.name: cell_state(cell.work_dir) for cell in sweep.cells}
    if args.status:
        width = max(len(cell.name) for cell in sweep.cells)
        for cell in sweep.cells:
            print(f'{cell.name:<{width}}  {states[cell.name].state:<8} {states[cell.name].detail}')
        counts = [f'{sum(s.state == state for s in states.values())} {state}' for state in STATES]
        print(f'{len(sweep.cells)} cells: {", ".join(counts)}')
        return
    if args.check:
        unknown = {cell.name: unknown_option_keys(cell, REPO) for cell in sweep.cells}
        for name, keys in unknown.items():
            if keys:
                print(f'{name}: options set keys its config does not have: {keys}')
        print(f'{len(sweep.cells)} cells checked, '
              f'{sum(bool(keys) for keys in unknown.values())} with unknown keys')
        return
    todo = [cell for cell in sweep.cells if states[cell.name].state not in ('done', 'running')]

    def command(cell):
        return cell_command(cell, sweep.launcher, REPO, sys.executable, args.resume)

    if args.dry_run:
        for slot in range(sweep.launcher.max_parallel if slot_env(sweep.launcher, 0) else 0):
            print(f'# slot {slot} adds: {shell_line([], slot_env(sweep.launcher, slot))}')
        for cell in sweep.cells:
            if cell in todo:
                print(shell_line(*command(cell)))
            else:
                print(f'# {cell.name}: {states[cell.name].state}, skipped')
        return
    print(
        f'{len(todo)} of {len(sweep.cells)} cells to run, {sweep.launcher.max_parallel} at a '
        f'time ({len(sweep.cells) - len(todo)} done or running)',
        flush=True)

    def report(event, cell, text):
        print(f'[{event}] {cell.name}: {text}', flush=True)

    previous = signal.signal(signal.SIGTERM, stop_on_sigterm)
    try:
        with WorkDirLock(sweep.work_dir):
            codes = run_cells(todo, sweep.launcher, command, report)
    except WorkDirLockedError as err:
        parser.exit(2, f'error: {err}\n')
    except KeyboardInterrupt:
        parser.exit(130, 'stopped: the running cells were stopped; run again with --resume\n')
    finally:
        signal.signal(signal.SIGTERM, previous)
    failed = sorted(name for name, code in codes.items() if code != 0)
    if failed:
        parser.exit(1, f'{len(failed)} cells failed: {", ".join(failed)} (see --status)\n')
    print('all cells ran; tables: python tools/collect_results.py ' + args.sweep)


if __name__ == '__main__':
    main()
