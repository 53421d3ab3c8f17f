"""facebookresearch/dinov2's layout (ViT-S/B/L/14, with or without registers)."""
from typing import Any, Mapping

import torch

from .keys import check_supported, rename
from .registry import CHECKPOINT_FORMATS, CheckpointFormat, StateDict
from .timm import convert_timm

DINOV2_UNSUPPORTED = {'.mlp.w12.': 'a SwiGLU MLP (ViT-g/14)', '.mlp.w3.': 'a SwiGLU MLP (ViT-g/14)'}
DINOV2_RENAMES = (
    (r'^register_tokens$', 'reg_token'),
    (r'^blocks\.\d+\.(\d+)\.', r'blocks.\1.'),  # chunked blocks keep their global index
)


def convert_dinov2(state_dict: Mapping[str, torch.Tensor]) -> StateDict:
    """facebookresearch/dinov2 ``.pth`` -> mmvitdyn (``mask_token`` dropped).

    Raises:
        ValueError: A SwiGLU MLP (ViT-g/14), which our ViT does not compute.
    """
    check_supported(state_dict, DINOV2_UNSUPPORTED, 'DINOv2')
    out = {rename(k, DINOV2_RENAMES): v for k, v in state_dict.items() if k != 'mask_token'}
    return convert_timm(out)


@CHECKPOINT_FORMATS.register_module(name='dinov2')
class DINOv2Format(CheckpointFormat):
    """A ``mask_token`` or ``register_tokens`` beside timm-like ViT keys."""
    PRIORITY = 70

    def detect(self, state_dict: Mapping[str, Any]) -> bool:
        return 'mask_token' in state_dict or 'register_tokens' in state_dict

    def convert(self, state_dict: Mapping[str, Any], **options) -> StateDict:
        return convert_dinov2(state_dict)
