from .checkpoint_convert import (FORMATS, convert_checkpoint, convert_dyt, convert_jax,
                                 convert_mmpretrain, convert_timm, describe_checkpoint,
                                 detect_format, jax_num_heads, to_classifier)
from .pretrained import LoadReport, load_pretrained, load_state_dict_file

__all__ = [
    'FORMATS', 'LoadReport', 'convert_checkpoint', 'convert_dyt', 'convert_jax',
    'convert_mmpretrain', 'convert_timm', 'describe_checkpoint', 'detect_format', 'jax_num_heads',
    'load_pretrained', 'load_state_dict_file', 'to_classifier'
]
