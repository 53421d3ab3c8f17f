"""Benchmarking: timing models side by side and the benchmarks' reports
(the tools of ``tools/analysis_tools/benchmark*.py``; docs/benchmarks.md)."""
from .backends import BACKENDS, Backends, backend_rows, time_backends
from .clip_classifier import ClipClassifier
from .report import Column, format_table, iqr, machine, write_report
from .timing import (AMP_DTYPES, amp_context, clock_columns, comparison_rows, ratio_of_medians,
                     resolve_device, run_conditions, run_fields, spread, time_interleaved,
                     timed_region)

__all__ = [
    'AMP_DTYPES', 'BACKENDS', 'Backends', 'ClipClassifier', 'Column', 'amp_context', 'backend_rows',
    'clock_columns', 'comparison_rows', 'format_table', 'iqr', 'machine', 'ratio_of_medians',
    'resolve_device', 'run_conditions', 'run_fields', 'spread', 'time_backends', 'time_interleaved',
    'timed_region', 'write_report'
]
