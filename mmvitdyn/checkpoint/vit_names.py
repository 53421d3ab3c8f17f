"""Parameter names of mmvitdyn's ViT family, shared by the backbones and the converters."""

# Parameter groups by name (``ViT.group_matcher``, as timm's): the stem before
# the blocks (patch embedding, prefix tokens, position embedding, pre-norm)
# and the blocks, with the block index captured.
VIT_PARAM_GROUPS = dict(
    stem=r'^(patch_embed\.|cls_token$|dist_token$|reg_token$|pos_embed$|norm_pre\.)',
    blocks=r'^blocks\.(\d+)\.')
# What DyT adds to a pretrained ViT block: the block attributes holding its
# adapter and its token dispatchers (a plain ViT checkpoint lacks them).
DYT_PARTS = ('adapter', 'dispatchers')
# The ``adapter_cfg.scale`` under which an adapter holds the parameter ``adapter.scale``.
LEARNABLE_SCALE = 'learnable'
# Relative-position tables of a windowed attention (``blocks.{i}.attn.rel_pos_h``).
REL_POS_TABLES = ('rel_pos_h', 'rel_pos_w')
# The feature pyramid a dense-prediction ViT adds (``pyramid.resamplers.{j}``).
PYRAMID_PREFIX = 'pyramid.'
# DynamicViT's token predictors (``predictors.{k}``).
PREDICTORS_PREFIX = 'predictors.'


def is_dyt_param(name: str) -> bool:
    """Whether a parameter or state-dict key, under any prefix, lies in a DyT part:
    ``'backbone.blocks.3.adapter.up.weight'`` -> True, ``'blocks.3.mlp.fc1.weight'`` -> False."""
    return any(part in DYT_PARTS for part in name.split('.')[:-1])
