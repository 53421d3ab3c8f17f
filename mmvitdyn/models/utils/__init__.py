from .checkpoint_convert import (FORMATS, VIT_PARAM_GROUPS, convert_checkpoint, convert_dynamicvit,
                                 convert_dyt, convert_jax, convert_mmpretrain, convert_timm,
                                 describe_checkpoint, detect_format, jax_num_heads, to_classifier)
from .pretrained import LoadReport, load_pretrained, load_state_dict_file, loads_checkpoint

__all__ = [
    'FORMATS', 'LoadReport', 'VIT_PARAM_GROUPS', 'convert_checkpoint', 'convert_dyt',
    'convert_dynamicvit', 'convert_jax', 'convert_mmpretrain', 'convert_timm',
    'describe_checkpoint', 'detect_format', 'jax_num_heads', 'load_pretrained', 'loads_checkpoint',
    'load_state_dict_file', 'to_classifier'
]
