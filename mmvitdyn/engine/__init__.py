from .distributed import CPUDistributedDataParallel, init_cpu_distributed
from .hooks import DispatchRateHook, GumbelTemperatureHook

__all__ = [
    'CPUDistributedDataParallel', 'DispatchRateHook', 'GumbelTemperatureHook',
    'init_cpu_distributed'
]
