from .atomic_checkpoint_hook import AtomicCheckpointHook
from .dispatch_rate_hook import DispatchRateHook
from .epoch_seed_hook import EpochSeedHook
from .gumbel_temperature_hook import GumbelTemperatureHook

__all__ = ['AtomicCheckpointHook', 'DispatchRateHook', 'EpochSeedHook', 'GumbelTemperatureHook']
