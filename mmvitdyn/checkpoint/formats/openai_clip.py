"""OpenAI CLIP's layout (the whole model, or its ``visual`` tower)."""
import re
from typing import Any, Mapping

import torch

from .keys import rename
from .registry import CHECKPOINT_FORMATS, CheckpointFormat, StateDict

OPENAI_CLIP_RENAMES = (
    (r'^conv1\.', 'patch_embed.proj.'),
    (r'^ln_pre\.', 'norm_pre.'),
    (r'^ln_post\.', 'norm.'),
    (r'^transformer\.resblocks\.(\d+)\.ln_1\.', r'blocks.\1.norm1.'),
    (r'^transformer\.resblocks\.(\d+)\.ln_2\.', r'blocks.\1.norm2.'),
    (r'^transformer\.resblocks\.(\d+)\.attn\.in_proj_(weight|bias)$', r'blocks.\1.attn.qkv.\2'),
    (r'^transformer\.resblocks\.(\d+)\.attn\.out_proj\.', r'blocks.\1.attn.proj.'),
    (r'^transformer\.resblocks\.(\d+)\.mlp\.c_fc\.', r'blocks.\1.mlp.fc1.'),
    (r'^transformer\.resblocks\.(\d+)\.mlp\.c_proj\.', r'blocks.\1.mlp.fc2.'),
)
OPENAI_CLIP_MARKER = re.compile(r'^(visual\.)?transformer\.resblocks\.\d+\.attn\.in_proj_weight$')


def convert_openai_clip(state_dict: Mapping[str, torch.Tensor]) -> StateDict:
    """OpenAI CLIP (the whole model, or its ``visual`` tower) -> mmvitdyn.

    The joint-embedding projection ``proj`` (C, D) becomes ``head.weight`` (D, C);
    the model needs ``pre_norm=True``, LayerNorm eps 1e-5 and QuickGELU.
    """
    visual = {k[len('visual.'):]: v for k, v in state_dict.items() if k.startswith('visual.')}
    out = {}
    for key, value in (visual or state_dict).items():
        if key == 'class_embedding':
            out['cls_token'] = value.reshape(1, 1, -1)
        elif key == 'positional_embedding':
            out['pos_embed'] = value.unsqueeze(0)
        elif key == 'proj':
            out['head.weight'] = value.T
        else:
            out[rename(key, OPENAI_CLIP_RENAMES)] = value
    return {k: v.contiguous() for k, v in out.items()}


@CHECKPOINT_FORMATS.register_module(name='openai_clip')
class OpenAIClipFormat(CheckpointFormat):
    """``transformer.resblocks.{i}.attn.in_proj_weight`` beside a ``conv1`` stem."""
    PRIORITY = 60

    def detect(self, state_dict: Mapping[str, Any]) -> bool:
        return any(OPENAI_CLIP_MARKER.match(k)
                   for k in state_dict) and any(k.endswith('conv1.weight') for k in state_dict)

    def convert(self, state_dict: Mapping[str, Any], **options) -> StateDict:
        return convert_openai_clip(state_dict)
