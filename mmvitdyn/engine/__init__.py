from .distributed import CPUDistributedDataParallel, init_cpu_distributed
from .hooks import AtomicCheckpointHook, DispatchRateHook, EpochSeedHook, GumbelTemperatureHook
from .optimizers import LayerDecayOptimWrapperConstructor, layer_decay_scale

__all__ = [
    'AtomicCheckpointHook', 'CPUDistributedDataParallel', 'DispatchRateHook', 'EpochSeedHook',
    'GumbelTemperatureHook', 'init_cpu_distributed', 'LayerDecayOptimWrapperConstructor',
    'layer_decay_scale'
]
