"""The official DynamicViT code's DeiT layout (raoyongming/DynamicViT)."""
import re
from typing import Any, Mapping

import torch

from ..vit_names import PREDICTORS_PREFIX
from .keys import rename
from .registry import CHECKPOINT_FORMATS, CheckpointFormat, StateDict
from .timm import convert_timm

# The official prediction modules (PredictorLG) -> our TokenPredictor.
DYNAMICVIT_RENAMES = (
    (r'^score_predictor\.(\d+)\.in_conv\.0\.(weight|bias)$', PREDICTORS_PREFIX + r'\1.norm.\2'),
    (r'^score_predictor\.(\d+)\.in_conv\.1\.(weight|bias)$', PREDICTORS_PREFIX + r'\1.embed.\2'),
    (r'^score_predictor\.(\d+)\.out_conv\.([024])\.(weight|bias)$',
     PREDICTORS_PREFIX + r'\1.mlp.\2.\3'),
)
# Every key of the official DynamicViT's DeiT models after renaming.
DYNAMICVIT_KEY = re.compile(
    r'^(cls_token|pos_embed|(patch_embed\.proj|norm|head)\.(weight|bias)|'
    r'blocks\.\d+\.(norm1|attn\.qkv|attn\.proj|norm2|mlp\.fc1|mlp\.fc2)\.'
    rf'(weight|bias)|{re.escape(PREDICTORS_PREFIX)}\d+\.(norm|embed|mlp\.[024])\.(weight|bias))$')


def convert_dynamicvit(state_dict: Mapping[str, torch.Tensor]) -> StateDict:
    """Official DynamicViT checkpoint of a DeiT (``model`` wrapper removed) -> mmvitdyn.

    It loads into a :class:`DynamicViT` with one ``prune_loc`` entry per predictor.

    Raises:
        ValueError: Keys outside the official DeiT models (named: e.g. an
            LV-ViT, Swin or ConvNeXt DynamicViT).
    """
    names = {k: rename(k, DYNAMICVIT_RENAMES) for k in state_dict}
    unknown = [k for k, name in names.items() if not DYNAMICVIT_KEY.match(name)]
    if unknown:
        raise ValueError(
            f'DynamicViT checkpoint keys {unknown[:8]}{" ..." if len(unknown) > 8 else ""} are '
            'not parts of its DeiT models (models/dyvit.py: a timm ViT and score_predictor.{k}.'
            '{in_conv.0, in_conv.1, out_conv.0, out_conv.2, out_conv.4}); its LV-ViT, Swin '
            'and ConvNeXt models are not supported')
    return convert_timm({names[k]: v for k, v in state_dict.items()})


@CHECKPOINT_FORMATS.register_module(name='dynamicvit')
class DynamicViTFormat(CheckpointFormat):
    """A timm ViT plus the prediction modules ``score_predictor.{k}``."""
    PRIORITY = 40

    def detect(self, state_dict: Mapping[str, Any]) -> bool:
        return any(k.startswith('score_predictor.') for k in state_dict)

    def convert(self, state_dict: Mapping[str, Any], **options) -> StateDict:
        return convert_dynamicvit(state_dict)
