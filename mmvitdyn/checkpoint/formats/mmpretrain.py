"""mmpretrain's ``VisionTransformer`` layout, optionally under ``backbone.``."""
import re
from typing import Any, Mapping

import torch

from .keys import check_supported, rename
from .registry import CHECKPOINT_FORMATS, CheckpointFormat, StateDict
from .timm import without_dist_token

MMPRETRAIN_UNSUPPORTED = {
    '.pre_norm.': 'a norm before the blocks (CLIP-style pre-norm)',
    '.gamma1.': 'layer scale',
    '.gamma2.': 'layer scale',
}
MMPRETRAIN_RENAMES = (
    (r'^patch_embed\.projection\.', 'patch_embed.proj.'),
    (r'^layers\.(\d+)\.ln1\.', r'blocks.\1.norm1.'),
    (r'^layers\.(\d+)\.ln2\.', r'blocks.\1.norm2.'),
    (r'^layers\.(\d+)\.attn\.', r'blocks.\1.attn.'),
    (r'^layers\.(\d+)\.ffn\.layers\.0\.0\.', r'blocks.\1.mlp.fc1.'),
    (r'^layers\.(\d+)\.ffn\.layers\.1\.', r'blocks.\1.mlp.fc2.'),
    (r'^ln1\.', 'norm.'),
)
# Group 1 is the prefix the backbone sits under ('' or e.g. 'backbone.').
MMPRETRAIN_MARKER = re.compile(r'^(.*?)(?:patch_embed\.projection\.weight$|layers\.\d+\.ffn\.)')


def convert_mmpretrain(state_dict: Mapping[str, torch.Tensor],
                       drop_dist_token: bool = False) -> StateDict:
    """mmpretrain ``VisionTransformer`` (optionally under ``backbone.``) -> mmvitdyn.

    Keys outside the backbone (``head.*``, ``neck.*``) and the post-pooling
    ``ln2`` of ``out_type='avg_featmap'`` pass through unchanged.
    """
    matches = (MMPRETRAIN_MARKER.match(k) for k in state_dict)
    prefix = next((m.group(1) for m in matches if m), None)
    if prefix is None:
        raise ValueError('not an mmpretrain VisionTransformer state dict: no '
                         'patch_embed.projection.weight or layers.{i}.ffn.* key')
    backbone = {k[len(prefix):]: v for k, v in state_dict.items() if k.startswith(prefix)}
    check_supported(backbone, MMPRETRAIN_UNSUPPORTED, 'mmpretrain')
    out = {k: v for k, v in state_dict.items() if not k.startswith(prefix)}
    out.update({rename(k, MMPRETRAIN_RENAMES): v for k, v in backbone.items()})
    return without_dist_token(out, drop_dist_token)


@CHECKPOINT_FORMATS.register_module(name='mmpretrain')
class MMPretrainFormat(CheckpointFormat):
    """mmpretrain's ``patch_embed.projection`` / ``layers.{i}.ffn`` keys."""
    PRIORITY = 20
    OPTIONS = ('drop_dist_token', )

    def detect(self, state_dict: Mapping[str, Any]) -> bool:
        return any(MMPRETRAIN_MARKER.match(k) for k in state_dict)

    def convert(self, state_dict: Mapping[str, Any], **options) -> StateDict:
        return convert_mmpretrain(state_dict, **options)
