from .config_loading import config_files, config_inputs, load_config
from .distributed import (CPUDistributedDataParallel, CPUTwoPassDistributedDataParallel,
                          TwoPassDistributedDataParallel, init_cpu_distributed)
from .hooks import (AtomicCheckpointHook, BestOverEpochsHook, ClassCountCheckHook, DispatchRateHook,
                    EpochSeedHook, EViTKeepRateHook, GumbelTemperatureHook)
from .optimizers import LayerDecayOptimWrapperConstructor, layer_decay_scale
from .setup_error import SetupError

__all__ = [
    'AtomicCheckpointHook', 'BestOverEpochsHook', 'ClassCountCheckHook',
    'CPUDistributedDataParallel', 'CPUTwoPassDistributedDataParallel', 'DispatchRateHook',
    'SetupError', 'config_files', 'config_inputs', 'load_config', 'EpochSeedHook',
    'EViTKeepRateHook', 'GumbelTemperatureHook', 'init_cpu_distributed',
    'LayerDecayOptimWrapperConstructor', 'layer_decay_scale', 'TwoPassDistributedDataParallel'
]
