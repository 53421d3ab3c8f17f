from .atomic_save import save_atomically
from .checkpoint_loader import load_local_checkpoint, register_local_checkpoint_loader

__all__ = ['load_local_checkpoint', 'register_local_checkpoint_loader', 'save_atomically']
