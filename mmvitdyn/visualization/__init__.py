"""Pictures of what DyT models do: activation rates and per-layer skip maps."""
from .dispatch_maps import SkipView, plot_rates, plot_skip_map, rates_summary

__all__ = ['SkipView', 'plot_rates', 'plot_skip_map', 'rates_summary']
