from .distributed import CPUDistributedDataParallel, init_cpu_distributed
from .hooks import DispatchRateHook, GumbelTemperatureHook
from .optimizers import LayerDecayOptimWrapperConstructor, layer_decay_scale

__all__ = [
    'CPUDistributedDataParallel', 'DispatchRateHook', 'GumbelTemperatureHook',
    'init_cpu_distributed', 'LayerDecayOptimWrapperConstructor', 'layer_decay_scale'
]
