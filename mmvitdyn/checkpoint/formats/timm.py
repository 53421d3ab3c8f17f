"""timm's ViT layout (DeiT, AugReg, MAE, timm's DINOv2 and CLIP ports)."""
from typing import Any, Mapping

import torch

from .keys import check_supported
from .registry import CHECKPOINT_FORMATS, CheckpointFormat, StateDict

# Key fragments (matched against '.' + key) of variants our ViT does not compute.
TIMM_UNSUPPORTED = {
    '.q_norm.': 'query/key normalisation',
    '.k_norm.': 'query/key normalisation',
}


def without_dist_token(state_dict: StateDict, drop: bool) -> StateDict:
    """Remove DeiT's distillation token and its position-embedding row when ``drop``."""
    if 'dist_token' not in state_dict or not drop:
        return state_dict
    state_dict = dict(state_dict)
    del state_dict['dist_token']
    pos_embed = state_dict['pos_embed']
    state_dict['pos_embed'] = torch.cat([pos_embed[:, :1], pos_embed[:, 2:]], dim=1)
    return state_dict


def embed_class_rows(state_dict: StateDict) -> StateDict:
    """Prepend zero rows for the class (and distillation) token to a position
    embedding of patches only (timm's ``no_embed_class``: a square row count)."""
    pos = state_dict.get('pos_embed')
    if pos is None or 'cls_token' not in state_dict:
        return state_dict
    side = int(round(pos.shape[1]**0.5))
    if side * side != pos.shape[1]:
        return state_dict
    rows = pos.new_zeros(1, 1 + ('dist_token' in state_dict), pos.shape[2])
    return {**state_dict, 'pos_embed': torch.cat([rows, pos], dim=1)}


def convert_timm(state_dict: Mapping[str, torch.Tensor],
                 drop_dist_token: bool = False) -> StateDict:
    """timm / DeiT / AugReg / MAE / DINOv2 / CLIP ``.pth`` (unwrapped) -> mmvitdyn;
    ``drop_dist_token`` drops a distilled DeiT's token and its position row."""
    check_supported(state_dict, TIMM_UNSUPPORTED, 'timm')
    return without_dist_token(embed_class_rows(dict(state_dict)), drop_dist_token)


@CHECKPOINT_FORMATS.register_module(name='timm')
class TimmFormat(CheckpointFormat):
    """A timm ``VisionTransformer`` state dict (the fallback for ViT keys)."""
    PRIORITY = 80
    OPTIONS = ('drop_dist_token', )

    def detect(self, state_dict: Mapping[str, Any]) -> bool:
        return 'patch_embed.proj.weight' in state_dict or any(
            k.startswith('blocks.') for k in state_dict)

    def convert(self, state_dict: Mapping[str, Any], **options) -> StateDict:
        return convert_timm(state_dict, **options)
