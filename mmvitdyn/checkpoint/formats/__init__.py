from .dinov2 import DINOv2Format, convert_dinov2
from .dynamicvit import DynamicViTFormat, convert_dynamicvit
from .dyt import DyTFormat, convert_dyt
from .jax import JaxFormat, convert_jax, jax_num_heads
from .mmpretrain import MMPretrainFormat, convert_mmpretrain
from .mmvitdyn import MMViTDyTFormat
from .openai_clip import OpenAIClipFormat, convert_openai_clip
from .registry import (CHECKPOINT_FORMATS, CheckpointFormat, StateDict, convert_checkpoint,
                       detect_format, format_names)
from .timm import TimmFormat, convert_timm

__all__ = [
    'CHECKPOINT_FORMATS', 'CheckpointFormat', 'DINOv2Format', 'DyTFormat', 'DynamicViTFormat',
    'JaxFormat', 'MMPretrainFormat', 'MMViTDyTFormat', 'OpenAIClipFormat', 'StateDict',
    'TimmFormat', 'convert_checkpoint', 'convert_dinov2', 'convert_dynamicvit', 'convert_dyt',
    'convert_jax', 'convert_mmpretrain', 'convert_openai_clip', 'convert_timm', 'detect_format',
    'format_names', 'jax_num_heads'
]
