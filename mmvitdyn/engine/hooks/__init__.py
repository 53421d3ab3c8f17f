from .atomic_checkpoint_hook import AtomicCheckpointHook
from .best_over_epochs_hook import BestOverEpochsHook
from .class_count_check_hook import ClassCountCheckHook
from .dispatch_rate_hook import DispatchRateHook
from .epoch_seed_hook import EpochSeedHook
from .gumbel_temperature_hook import GumbelTemperatureHook
from .keep_rate_schedule_hook import EViTKeepRateHook

__all__ = [
    'AtomicCheckpointHook', 'BestOverEpochsHook', 'ClassCountCheckHook', 'DispatchRateHook',
    'EpochSeedHook', 'EViTKeepRateHook', 'GumbelTemperatureHook'
]
