from .atomic_save import (ATOMIC_BACKEND, AtomicLocalBackend, atomic_target, dump_json_atomically,
                          save_atomically)
from .checkpoint_loader import (RUNNER_CHECKPOINT_TYPES, TRUST_ENV, TRUST_FLAG,
                                UnsafeCheckpointError, checkpoints_trusted, load_local_checkpoint,
                                register_local_checkpoint_loader)

__all__ = [
    'ATOMIC_BACKEND', 'AtomicLocalBackend', 'RUNNER_CHECKPOINT_TYPES', 'TRUST_ENV', 'TRUST_FLAG',
    'UnsafeCheckpointError', 'atomic_target', 'checkpoints_trusted', 'dump_json_atomically',
    'load_local_checkpoint', 'register_local_checkpoint_loader', 'save_atomically'
]
