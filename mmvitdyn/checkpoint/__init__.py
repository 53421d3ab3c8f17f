from .classifier import to_classifier
from .describe import describe_checkpoint
from .formats import (CHECKPOINT_FORMATS, CheckpointFormat, convert_checkpoint, convert_dinov2,
                      convert_dynamicvit, convert_dyt, convert_jax, convert_mmpretrain,
                      convert_openai_clip, convert_timm, detect_format, format_names, jax_num_heads)
from .loader import UnsafeCheckpointError, load_checkpoint_file, load_npz_file
from .pretrained import (LoadReport, group_keys, load_pretrained, load_state_dict_file,
                         loads_checkpoint, strip_prefix)
from .schemes import SCHEMES, register_checkpoint_schemes
from .trust import TRUST_FLAG, is_local_path, is_trusted, trusted_checkpoints, trusted_names
from .values import RUNNER_CHECKPOINT_GLOBALS
from .vit_names import (DYT_PARTS, LEARNABLE_SCALE, PREDICTORS_PREFIX, PYRAMID_PREFIX,
                        REL_POS_TABLES, VIT_PARAM_GROUPS, is_dyt_param)

__all__ = [
    'CHECKPOINT_FORMATS', 'CheckpointFormat', 'DYT_PARTS', 'LEARNABLE_SCALE', 'LoadReport',
    'PREDICTORS_PREFIX', 'PYRAMID_PREFIX', 'REL_POS_TABLES', 'RUNNER_CHECKPOINT_GLOBALS', 'SCHEMES',
    'TRUST_FLAG', 'UnsafeCheckpointError', 'VIT_PARAM_GROUPS', 'convert_checkpoint',
    'convert_dinov2', 'convert_dynamicvit', 'convert_dyt', 'convert_jax', 'convert_mmpretrain',
    'convert_openai_clip', 'convert_timm', 'describe_checkpoint', 'detect_format', 'format_names',
    'group_keys', 'is_dyt_param', 'is_local_path', 'is_trusted', 'jax_num_heads',
    'load_checkpoint_file', 'load_npz_file', 'load_pretrained', 'load_state_dict_file',
    'loads_checkpoint', 'register_checkpoint_schemes', 'strip_prefix', 'to_classifier',
    'trusted_checkpoints', 'trusted_names'
]
