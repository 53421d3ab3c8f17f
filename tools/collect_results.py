"""Collect a sweep's results as its paper's table; see docs/sweeps.md.

    python tools/collect_results.py SWEEP [--format table|markdown|csv] [--out FILE]
    python tools/collect_results.py --work-dirs LABEL=DIR [LABEL=DIR ...] [--metrics KEY ...]
                                    [--format ...] [--out FILE]

SWEEP: each cell's final validation, laid out as the sweep file's ``table``
asks; a cell that is not done shows its state, never a number; the papers'
own numbers (from configs/*/metafile.yml) are listed under the table with
their source. ``--work-dirs``: one row per run directory (its newest
validation or test), e.g. runs made by hand or by tools/demo.py; a work dir
without one is refused, as is a ``--metrics`` key no run logged (unless it
is a known metric, e.g. ``act_rate`` beside plain ViTs: left out). A record's
last line cut short (a run killed while logging it) is left out with a
warning; any other line that is not JSON is refused, naming file and line.
``--out`` never replaces a file the command reads.
"""
import argparse
import os.path as osp
import sys
from glob import glob

from mmvitdyn.sweeps import (OUTPUT_FORMATS, DamagedRecordError, NothingToShowError, SweepError,
                             build_blocks, cell_results, cell_state, format_blocks, load_sweep,
                             paper_results, read_files, work_dir_blocks)
from mmvitdyn.utils import OutputIsInputError, refuse_overwriting_inputs, write_text_atomically

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Collect the results of a sweep as a table')
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument('sweep', nargs='?', help='sweep file (e.g. configs/sweeps/dyt_vtab1k.py)')
    source.add_argument(
        '--work-dirs', nargs='+', metavar='LABEL=DIR', help='run directories, one row each')
    parser.add_argument('--format', choices=OUTPUT_FORMATS, default='table', help='output format')
    parser.add_argument(
        '--metrics',
        nargs='+',
        help='with --work-dirs: the logged keys to show (default: the known metrics); a '
        'known one no run logged is left out, any other is refused')
    parser.add_argument('--out', help='also write the output to this file')
    return parser, parser.parse_args(argv)


def warn_cut(path: str, number: int) -> None:
    print(
        f'warning: {path}: line {number} is cut short (the run was killed while logging it?): '
        'it is left out, the records before it are used',
        file=sys.stderr)


def main(argv=None):
    parser, args = parse_args(argv)
    if args.work_dirs:
        labelled = [item.rpartition('=') for item in args.work_dirs]
        bad = [label + sep + path for label, sep, path in labelled if not (label and sep and path)]
        if bad:
            parser.error(f'--work-dirs {bad}: each must be LABEL=DIR')
        labels = [label for label, _, _ in labelled]
        repeated = sorted({label for label in labels if labels.count(label) > 1})
        if repeated:
            parser.error(f'--work-dirs labels {repeated} are given more than once: one row each')
        work_dirs = {label: path for label, _, path in labelled}
        inputs = [file for path in work_dirs.values() for file in read_files(path)]
    else:
        if args.metrics:
            parser.error("--metrics is for --work-dirs: a sweep file's table names its metrics")
        try:
            sweep = load_sweep(args.sweep, REPO)
        except SweepError as err:
            parser.error(str(err))
        inputs = [
            args.sweep, *glob(osp.join(REPO, 'configs', '*', 'metafile.yml')),
            *(file for cell in sweep.cells for file in read_files(cell.work_dir))
        ]
    if args.out:  # refused before anything is read or printed
        try:
            refuse_overwriting_inputs(args.out, inputs)
        except OutputIsInputError as err:
            parser.error(str(err))
    if args.work_dirs:
        try:
            blocks = work_dir_blocks(work_dirs, args.metrics, warn_cut)
        except (FileNotFoundError, NothingToShowError) as err:
            parser.error(str(err))
        except DamagedRecordError as err:  # not a sweep's cell: no sweep to resume
            parser.error(f'{err.path} {err.problem}')
    else:
        states = {cell.name: cell_state(cell.work_dir) for cell in sweep.cells}
        try:
            results = {
                cell.name: cell_results(cell.work_dir, on_cut=warn_cut)
                for cell in sweep.cells if states[cell.name].state == 'done'
            }
        except DamagedRecordError as err:
            parser.error(str(err))
        blocks = build_blocks(sweep, states, results, paper_results(REPO))
    text = format_blocks(blocks, args.format)
    print(text, end='')
    if args.out:
        try:
            write_text_atomically(text, args.out, inputs)
        except OutputIsInputError as err:
            parser.error(str(err))


if __name__ == '__main__':
    main()
