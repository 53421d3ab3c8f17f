from .atomic_save import (ATOMIC_BACKEND, AtomicLocalBackend, OutputIsInputError, atomic_target,
                          dump_json_atomically, refuse_overwriting_inputs,
                          remove_orphaned_temporaries, save_atomically, save_figure_atomically,
                          write_text_atomically)
from .checkpoint_loader import (EXPANSION_ENV, UnsafeCheckpointError, load_checkpoint_file,
                                load_npz_file, max_expansion)
from .checkpoint_schemes import SCHEMES, register_checkpoint_schemes
from .checkpoint_trust import (TRUST_ENV, TRUST_FLAG, TRUST_OPTION, env_trusts_all, is_local_path,
                               is_trusted, trusted_checkpoints, trusted_names)
from .checkpoint_values import RUNNER_CHECKPOINT_GLOBALS
from .value_checks import (check_act_cfg, check_bool, check_int, check_norm_cfg, check_number,
                           check_rate)
from .work_dir_lock import WorkDirLock, WorkDirLockedError

__all__ = [
    'ATOMIC_BACKEND', 'AtomicLocalBackend', 'EXPANSION_ENV', 'OutputIsInputError',
    'RUNNER_CHECKPOINT_GLOBALS', 'SCHEMES', 'TRUST_ENV', 'TRUST_FLAG', 'TRUST_OPTION',
    'UnsafeCheckpointError', 'WorkDirLock', 'WorkDirLockedError', 'atomic_target', 'check_act_cfg',
    'check_bool', 'check_int', 'check_norm_cfg', 'check_number', 'check_rate',
    'dump_json_atomically', 'env_trusts_all', 'is_local_path', 'is_trusted', 'load_checkpoint_file',
    'load_npz_file', 'max_expansion', 'refuse_overwriting_inputs', 'register_checkpoint_schemes',
    'remove_orphaned_temporaries', 'save_atomically', 'save_figure_atomically',
    'trusted_checkpoints', 'trusted_names', 'write_text_atomically'
]
