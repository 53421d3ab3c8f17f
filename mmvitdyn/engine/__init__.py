from .distributed import CPUDistributedDataParallel, init_cpu_distributed

__all__ = ['CPUDistributedDataParallel', 'init_cpu_distributed']
