"""Sweeps: a grid of training runs from a sweep file, run, watched and tabulated
(``tools/sweep.py``, ``tools/collect_results.py``; docs/sweeps.md)."""
from .cell_states import STATES, CellState, cell_state
from .launch import cell_command, run_cells, shell_line, slot_env
from .results import (OUTPUT_FORMATS, NothingToShowError, build_blocks, cell_results, format_blocks,
                      paper_results, read_files, work_dir_blocks)
from .run_records import DamagedRecordError
from .sweep_file import Cell, Launcher, Sweep, SweepError, Table, load_sweep, unknown_option_keys

__all__ = [
    'Cell', 'CellState', 'DamagedRecordError', 'Launcher', 'NothingToShowError', 'OUTPUT_FORMATS',
    'STATES', 'Sweep', 'SweepError', 'Table', 'build_blocks', 'cell_command', 'cell_results',
    'cell_state', 'format_blocks', 'load_sweep', 'paper_results', 'read_files', 'run_cells',
    'shell_line', 'slot_env', 'unknown_option_keys', 'work_dir_blocks'
]
