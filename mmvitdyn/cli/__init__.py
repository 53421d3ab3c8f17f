"""Command-line glue the tools share, one module per tool family (docs/design_notes.md)."""
from .benchmarks import (add_backend_options, add_timing_options, check_timing_options,
                         parse_backend_options, parse_timing_options, timing_options)
from .checkpoints import add_trust_option

__all__ = [
    'add_backend_options', 'add_timing_options', 'add_trust_option', 'check_timing_options',
    'parse_backend_options', 'parse_timing_options', 'timing_options'
]
