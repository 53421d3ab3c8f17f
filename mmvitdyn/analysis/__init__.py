"""What a model computes: FLOPs (static, and DyT's per image), dispatch rates, gate
calibration, recorded backbone forwards."""
from .backbone_recorder import BackboneForward, BackboneRecorder
from .calibration import calibrate_gates
from .dispatch_stats import part_rates
from .dyt_flops import DyTFlopCounter, PartCost, all_tokens_active, find_dyt_backbone
from .op_handles import baddbmm_flop_jit, extra_flop_handles, sdpa_flop_jit
from .static_flops import TensorForward, count_flops, count_params, flop_analyzer, is_recognizer
from .val_data import val_images

__all__ = [
    'BackboneForward', 'BackboneRecorder', 'DyTFlopCounter', 'PartCost', 'TensorForward',
    'all_tokens_active', 'baddbmm_flop_jit', 'calibrate_gates', 'count_flops', 'count_params',
    'extra_flop_handles', 'find_dyt_backbone', 'flop_analyzer', 'is_recognizer', 'part_rates',
    'sdpa_flop_jit', 'val_images'
]
