"""Collect a sweep's results as its paper's table; see docs/sweeps.md.

    python tools/collect_results.py SWEEP [--format table|markdown|csv] [--out FILE]
    python tools/collect_results.py --work-dirs LABEL=DIR [LABEL=DIR ...] [--format ...]

SWEEP: each cell's final validation, laid out as the sweep file's ``table``
asks; a cell that is not done shows its state, never a number; the papers'
own numbers (from configs/*/metafile.yml) are listed under the table with
their source. ``--work-dirs``: one row per run directory (its newest
validation or test), e.g. runs made by hand or by tools/demo.py.
"""
import argparse
import os.path as osp

from mmvitdyn.analysis.sweep import DamagedRecordError, SweepError, cell_state, load_sweep
from mmvitdyn.analysis.sweep_results import (FORMATS, METRIC_NAMES, build_blocks, cell_results,
                                             format_blocks, paper_results, work_dir_blocks)
from mmvitdyn.utils import OutputIsInputError, write_text_atomically

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Collect the results of a sweep as a table')
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument('sweep', nargs='?', help='sweep file (e.g. configs/sweeps/dyt_vtab1k.py)')
    source.add_argument(
        '--work-dirs', nargs='+', metavar='LABEL=DIR', help='run directories, one row each')
    parser.add_argument('--format', choices=FORMATS, default='table', help='output format')
    parser.add_argument(
        '--metrics',
        nargs='+',
        default=list(METRIC_NAMES),
        help='with --work-dirs: the logged keys to show (those logged by some run)')
    parser.add_argument('--out', help='also write the output to this file')
    return parser, parser.parse_args(argv)


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
        try:
            blocks = work_dir_blocks({label: path for label, _, path in labelled}, args.metrics)
        except (FileNotFoundError, DamagedRecordError) as err:
            parser.error(str(err))
    else:
        try:
            sweep = load_sweep(args.sweep, REPO)
        except SweepError as err:
            parser.error(str(err))
        states = {cell.name: cell_state(cell.work_dir) for cell in sweep.cells}
        try:
            results = {
                cell.name: cell_results(cell.work_dir)
                for cell in sweep.cells if states[cell.name].state == 'done'
            }
        except DamagedRecordError as err:
            parser.error(str(err))
        blocks = build_blocks(sweep, states, results, paper_results(REPO))
    text = format_blocks(blocks, args.format)
    print(text, end='')
    if args.out:
        try:
            write_text_atomically(text, args.out, [] if args.work_dirs else [args.sweep])
        except OutputIsInputError as err:
            parser.error(str(err))


if __name__ == '__main__':
    main()
