from .distributed import (CPUDistributedDataParallel, CPUTwoPassDistributedDataParallel,
                          TwoPassDistributedDataParallel, init_cpu_distributed)
from .hooks import (AtomicCheckpointHook, BestOverEpochsHook, DispatchRateHook, EpochSeedHook,
                    EViTKeepRateHook, GumbelTemperatureHook)
from .optimizers import LayerDecayOptimWrapperConstructor, layer_decay_scale

__all__ = [
    'AtomicCheckpointHook', 'BestOverEpochsHook', 'CPUDistributedDataParallel',
    'CPUTwoPassDistributedDataParallel', 'DispatchRateHook', 'EpochSeedHook', 'EViTKeepRateHook',
    'GumbelTemperatureHook', 'init_cpu_distributed', 'LayerDecayOptimWrapperConstructor',
    'layer_decay_scale', 'TwoPassDistributedDataParallel'
]
