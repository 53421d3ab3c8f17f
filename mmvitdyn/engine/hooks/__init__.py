from .dispatch_rate_hook import DispatchRateHook
from .gumbel_temperature_hook import GumbelTemperatureHook

__all__ = ['DispatchRateHook', 'GumbelTemperatureHook']
