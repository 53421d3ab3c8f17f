from .distributed import (CPUDistributedDataParallel, CPUTwoPassDistributedDataParallel,
                          TwoPassDistributedDataParallel, init_cpu_distributed)
from .hooks import (AtomicCheckpointHook, BestOverEpochsHook, ClassCountCheckHook, DispatchRateHook,
                    EpochSeedHook, EViTKeepRateHook, GumbelTemperatureHook)
from .optimizers import LayerDecayOptimWrapperConstructor, layer_decay_scale

__all__ = [
    'AtomicCheckpointHook', 'BestOverEpochsHook', 'ClassCountCheckHook',
    'CPUDistributedDataParallel', 'CPUTwoPassDistributedDataParallel', 'DispatchRateHook',
    'EpochSeedHook', 'EViTKeepRateHook', 'GumbelTemperatureHook', 'init_cpu_distributed',
    'LayerDecayOptimWrapperConstructor', 'layer_decay_scale', 'TwoPassDistributedDataParallel'
]
