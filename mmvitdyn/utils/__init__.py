from .atomic_save import (ATOMIC_BACKEND, AtomicLocalBackend, OutputIsInputError, atomic_target,
                          dump_json_atomically, refuse_overwriting_inputs,
                          remove_orphaned_temporaries, save_atomically, save_figure_atomically,
                          write_text_atomically)
from .value_checks import (check_act_cfg, check_bool, check_int, check_norm_cfg, check_number,
                           check_rate)
from .work_dir_lock import WorkDirLock, WorkDirLockedError

__all__ = [
    'ATOMIC_BACKEND', 'AtomicLocalBackend', 'OutputIsInputError', 'WorkDirLock',
    'WorkDirLockedError', 'atomic_target', 'check_act_cfg', 'check_bool', 'check_int',
    'check_norm_cfg', 'check_number', 'check_rate', 'dump_json_atomically',
    'refuse_overwriting_inputs', 'remove_orphaned_temporaries', 'save_atomically',
    'save_figure_atomically', 'write_text_atomically'
]
