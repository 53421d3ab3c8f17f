"""Foreign ViT checkpoints to mmvitdyn parameter names (pure functions).

:func:`detect_format` names a state dict's layout, one of :data:`FORMATS`, and
:func:`convert_checkpoint` converts it (the keys of each format:
docs/design_notes.md). Keys a converter does not know pass through unchanged,
so the loader reports them; features our ViT cannot compute raise ``ValueError``.
"""
import re
from collections import Counter
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import torch

from ..layers import is_dyt_param
from ..layers.adapter import LEARNABLE_SCALE

# Our ViT's parameter groups by name (``ViT.group_matcher``, as timm's): the
# stem before the blocks (patch embedding, prefix tokens, position embedding,
# pre-norm) and the blocks, with the block index captured.
VIT_PARAM_GROUPS = dict(
    stem=r'^(patch_embed\.|cls_token$|dist_token$|reg_token$|pos_embed$|norm_pre\.)',
    blocks=r'^blocks\.(\d+)\.')

StateDict = Dict[str, torch.Tensor]

FORMATS = ('mmvitdyn', 'timm', 'jax', 'mmpretrain', 'dyt', 'dinov2', 'openai_clip', 'dynamicvit')

# Key fragments (matched against '.' + key) of variants our ViT does not compute.
TIMM_UNSUPPORTED = {
    '.q_norm.': 'query/key normalisation',
    '.k_norm.': 'query/key normalisation',
}
MMPRETRAIN_UNSUPPORTED = {
    '.pre_norm.': 'a norm before the blocks (CLIP-style pre-norm)',
    '.gamma1.': 'layer scale',
    '.gamma2.': 'layer scale',
}
DYT_REL_POS = "relative position bias (its segmentation backbone's use_rel_pos_bias)"
DYT_UNSUPPORTED = {
    '.relative_position_bias_table': DYT_REL_POS,
    '.relative_position_index': DYT_REL_POS,
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
DYT_RENAMES = (
    (r'^blocks\.(\d+)\.adaptmlp\.down_proj\.', r'blocks.\1.adapter.down.'),
    (r'^blocks\.(\d+)\.adaptmlp\.up_proj\.', r'blocks.\1.adapter.up.'),
    (r'^blocks\.(\d+)\.adaptmlp\.adapter_layer_norm_before\.', r'blocks.\1.adapter.norm.'),
    (r'^blocks\.(\d+)\.adaptmlp\.scale$', r'blocks.\1.adapter.scale'),
    (r'^blocks\.(\d+)\.mlp_token_select\.mlp_head\.', r'blocks.\1.dispatchers.mlp.gate.'),
    # The segmentation backbone's pyramid, ViT(pyramid=dict(type='RescalePyramid')).
    *((rf'^fpn{j + 1}\.', f'pyramid.resamplers.{j}.') for j in range(4)),
)

# The official DynamicViT's prediction modules (PredictorLG) -> our TokenPredictor.
DYNAMICVIT_RENAMES = (
    (r'^score_predictor\.(\d+)\.in_conv\.0\.(weight|bias)$', r'predictors.\1.norm.\2'),
    (r'^score_predictor\.(\d+)\.in_conv\.1\.(weight|bias)$', r'predictors.\1.embed.\2'),
    (r'^score_predictor\.(\d+)\.out_conv\.([024])\.(weight|bias)$', r'predictors.\1.mlp.\2.\3'),
)
# Every key of the official DynamicViT's DeiT models after renaming.
DYNAMICVIT_KEY = re.compile(
    r'^(cls_token|pos_embed|(patch_embed\.proj|norm|head)\.(weight|bias)|'
    r'blocks\.\d+\.(norm1|attn\.qkv|attn\.proj|norm2|mlp\.fc1|mlp\.fc2)\.'
    r'(weight|bias)|predictors\.\d+\.(norm|embed|mlp\.[024])\.(weight|bias))$')

DINOV2_UNSUPPORTED = {'.mlp.w12.': 'a SwiGLU MLP (ViT-g/14)', '.mlp.w3.': 'a SwiGLU MLP (ViT-g/14)'}
DINOV2_RENAMES = (
    (r'^register_tokens$', 'reg_token'),
    (r'^blocks\.\d+\.(\d+)\.', r'blocks.\1.'),  # chunked blocks keep their global index
)
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

# Group 1 is the prefix the backbone sits under ('' or e.g. 'backbone.').
MMPRETRAIN_MARKER = re.compile(r'^(.*?)(?:patch_embed\.projection\.weight$|layers\.\d+\.ffn\.)')

JAX_EMBED = 'embedding/kernel'
JAX_BLOCK = 'Transformer/encoderblock_{}/'
JAX_MHA = 'MultiHeadDotProductAttention_1/'


def detect_format(state_dict: Mapping[str, Any]) -> str:
    """Name the layout of ``state_dict``: one of :data:`FORMATS`.

    Raises:
        ValueError: No known layout matches; the message shows some keys.
    """
    keys = list(state_dict)
    if any(k.endswith(JAX_EMBED) for k in keys):
        return 'jax'
    if any(MMPRETRAIN_MARKER.match(k) for k in keys):
        return 'mmpretrain'
    if any('.adaptmlp.' in k or '.mlp_token_select.' in k for k in keys):
        return 'dyt'
    if any(k.startswith('score_predictor.') for k in keys):
        return 'dynamicvit'
    if any(k.startswith('blocks.') and is_dyt_param(k) for k in keys):
        return 'mmvitdyn'
    clip_blocks = any(OPENAI_CLIP_MARKER.match(k) for k in keys)
    if clip_blocks and any(k.endswith('conv1.weight') for k in keys):
        return 'openai_clip'
    if 'mask_token' in state_dict or 'register_tokens' in state_dict:
        return 'dinov2'
    if 'patch_embed.proj.weight' in state_dict or any(k.startswith('blocks.') for k in keys):
        return 'timm'
    raise ValueError(
        f'unknown checkpoint layout (first keys: {keys[:5]}); known formats are {FORMATS}. '
        "If the ViT sits under a prefix (e.g. 'backbone.'), pass prefix='backbone.'")


def _check_supported(state_dict: Mapping[str, Any], unsupported: Mapping[str, str],
                     source: str) -> None:
    for key in state_dict:
        for fragment, feature in unsupported.items():
            if fragment in f'.{key}':
                raise ValueError(f'{source} checkpoint key {key!r} belongs to {feature}, '
                                 "which mmvitdyn's ViT does not implement")


def _rename(key: str, renames: Sequence[Tuple[str, str]]) -> str:
    for pattern, replacement in renames:
        new, count = re.subn(pattern, replacement, key)
        if count:
            return new
    return key


def _drop_dist_token(state_dict: StateDict, drop_dist_token: bool) -> StateDict:
    """Remove DeiT's distillation token and its position-embedding row when asked."""
    if 'dist_token' not in state_dict or not drop_dist_token:
        return state_dict
    state_dict = dict(state_dict)
    del state_dict['dist_token']
    pos_embed = state_dict['pos_embed']
    state_dict['pos_embed'] = torch.cat([pos_embed[:, :1], pos_embed[:, 2:]], dim=1)
    return state_dict


def _embed_class_rows(state_dict: StateDict) -> StateDict:
    """Give a position embedding of patches only (timm's ``no_embed_class``, a
    square number of rows) zero rows for the class (and distillation) token,
    which then carry no position, as in that layout."""
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
    """timm / DeiT / AugReg / MAE / DINOv2 / CLIP ``.pth`` -> mmvitdyn.

    Args:
        state_dict (Mapping): A timm ``VisionTransformer`` state dict (DeiT's
            ``model`` wrapper already removed).
        drop_dist_token (bool): For distilled DeiT: drop ``dist_token`` and its
            position embedding (for a ViT without ``dist_token``) instead of
            keeping them (for ``ViT(dist_token=True)``). Defaults to False.

    Returns:
        dict: The state dict with mmvitdyn keys; heads pass through.
    """
    _check_supported(state_dict, TIMM_UNSUPPORTED, 'timm')
    return _drop_dist_token(_embed_class_rows(dict(state_dict)), drop_dist_token)


def convert_dinov2(state_dict: Mapping[str, torch.Tensor]) -> StateDict:
    """facebookresearch/dinov2 ``.pth`` (ViT-S/B/L/14, with or without registers) -> mmvitdyn.

    Raises:
        ValueError: A SwiGLU MLP (ViT-g/14), which our ViT does not compute.
    """
    _check_supported(state_dict, DINOV2_UNSUPPORTED, 'DINOv2')
    out = {_rename(k, DINOV2_RENAMES): v for k, v in state_dict.items() if k != 'mask_token'}
    return convert_timm(out)


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
            out[_rename(key, OPENAI_CLIP_RENAMES)] = value
    return {k: v.contiguous() for k, v in out.items()}


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
    _check_supported(backbone, MMPRETRAIN_UNSUPPORTED, 'mmpretrain')
    out = {k: v for k, v in state_dict.items() if not k.startswith(prefix)}
    out.update({_rename(k, MMPRETRAIN_RENAMES): v for k, v in backbone.items()})
    return _drop_dist_token(out, drop_dist_token)


def _blocks_with(state_dict: Mapping[str, Any], suffix: str) -> List[int]:
    """Sorted indices i of the keys ``blocks.{i}.{suffix}``."""
    pattern = re.compile(r'^blocks\.(\d+)\.' + re.escape(suffix) + '$')
    return sorted({int(m.group(1)) for k in state_dict for m in [pattern.match(k)] if m})


def _check_dyt_parts(state_dict: Mapping[str, torch.Tensor]) -> None:
    """Refuse renamed DyT parts that DyTViT cannot hold, naming keys and switches."""
    unknown = [k for k in state_dict if '.adaptmlp.' in f'.{k}' or '.mlp_token_select.' in f'.{k}']
    if unknown:
        raise ValueError(
            f'DyT checkpoint keys {unknown} are not parts mmvitdyn maps: the adapter '
            '(adaptmlp.{down_proj, up_proj, adapter_layer_norm_before, scale}) and the MLP '
            'dispatcher (mlp_token_select.mlp_head)')
    gates = {k: v for k, v in state_dict.items() if re.match(r'^blocks\.\d+\.dispatchers\.', k)}
    wide = [k for k, v in gates.items() if k.endswith('.weight') and v.shape[0] != 1]
    if wide:
        raise ValueError(f'DyT checkpoint keys {wide} are dispatchers with more than one output '
                         '(TokenSelect num_sub_layer > 1); a DyTViT dispatcher has one')
    adapters = _blocks_with(state_dict, 'adapter.down.weight')
    switches = (('adapter.norm.weight', "adapter_cfg.layer_norm='in' or 'out'"),
                ('adapter.scale', "adapter_cfg.scale='learnable'"))
    for suffix, switch in switches:
        present = _blocks_with(state_dict, suffix)
        if present and present != adapters:
            raise ValueError(f'DyT checkpoint has blocks.*.{suffix} in blocks {present} but '
                             f'adapters in blocks {adapters}: {switch} applies to every adapter')
    dispatched = _blocks_with(state_dict, 'dispatchers.mlp.gate.weight')
    depth = len(_blocks_with(state_dict, 'norm1.weight'))
    if dispatched and dispatched != list(range(dispatched[0], depth)):
        raise ValueError(f'DyT checkpoint has dispatchers (blocks.*.mlp_token_select) in blocks '
                         f'{dispatched} of {depth}: keep_layers=k dispatches blocks k to '
                         f'{depth - 1}, every one of them')


def convert_dyt(state_dict: Mapping[str, torch.Tensor]) -> StateDict:
    """Official DyT checkpoint (``model`` wrapper removed) -> mmvitdyn.

    The switches the result needs are in :func:`describe_checkpoint`.

    Raises:
        ValueError: A key DyTViT has no place for (named, with the official
            switch that makes it), or a pattern of DyT parts no setting of
            ``keep_layers`` / ``adapter_cfg`` gives.
    """
    _check_supported(state_dict, DYT_UNSUPPORTED, 'DyT')
    renamed = {_rename(k, DYT_RENAMES): v for k, v in state_dict.items()}
    _check_dyt_parts(renamed)
    return convert_timm(renamed)


def convert_dynamicvit(state_dict: Mapping[str, torch.Tensor]) -> StateDict:
    """Official DynamicViT checkpoint of a DeiT (``model`` wrapper removed) -> mmvitdyn.

    It loads into a :class:`DynamicViT` with one ``prune_loc`` entry per predictor.

    Raises:
        ValueError: Keys outside the official DeiT models (named: e.g. an
            LV-ViT, Swin or ConvNeXt DynamicViT).
    """
    names = {k: _rename(k, DYNAMICVIT_RENAMES) for k in state_dict}
    unknown = [k for k, name in names.items() if not DYNAMICVIT_KEY.match(name)]
    if unknown:
        raise ValueError(
            f'DynamicViT checkpoint keys {unknown[:8]}{" ..." if len(unknown) > 8 else ""} are '
            'not parts of its DeiT models (models/dyvit.py: a timm ViT and score_predictor.{k}.'
            '{in_conv.0, in_conv.1, out_conv.0, out_conv.2, out_conv.4}); its LV-ViT, Swin '
            'and ConvNeXt models are not supported')
    return convert_timm({names[k]: v for k, v in state_dict.items()})


def _as_tensor(value: Any) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    return torch.from_numpy(np.ascontiguousarray(value))


def _jax_prefix(arrays: Mapping[str, Any]) -> str:
    embed = next((k for k in arrays if k.endswith(JAX_EMBED)), None)
    if embed is None:
        raise ValueError(f'not a Flax ViT checkpoint: no {JAX_EMBED!r} array')
    return embed[:-len(JAX_EMBED)]


def jax_num_heads(arrays: Mapping[str, Any]) -> int:
    """Number of attention heads of a JAX checkpoint (from a (C, H, D) query kernel)."""
    prefix = _jax_prefix(arrays)
    return int(arrays[f'{prefix}{JAX_BLOCK.format(0)}{JAX_MHA}query/kernel'].shape[1])


def convert_jax(arrays: Mapping[str, Any]) -> StateDict:
    """Google Flax ``.npz`` (name -> array) -> mmvitdyn.

    The fused ``qkv`` rows are ordered (3, H, D): the query, key and value
    kernels (C, H, D) are flattened to (C, H*D), transposed and stacked; the
    output kernel (H, D, C) becomes (C, H*D); the patch kernel HWIO becomes
    OIHW. ``head`` and ``pre_logits`` become ``head.*`` and
    ``pre_logits.fc.*``; other unused arrays pass through under their names.

    Raises:
        ValueError: An array the layout needs is absent, or the blocks are
            stored scanned (stacked) rather than one per ``encoderblock_{i}``.
    """
    arrays = {k: _as_tensor(v) for k, v in arrays.items()}
    prefix = _jax_prefix(arrays)
    if f'{prefix}Transformer/encoderblock/LayerNorm_0/scale' in arrays:
        raise ValueError(
            'JAX checkpoint stores its blocks scanned (Transformer/encoderblock/...); '
            'only the per-block layout (Transformer/encoderblock_{i}/...) is supported')
    used = set()

    def take(name: str) -> torch.Tensor:
        if prefix + name not in arrays:
            raise ValueError(f'JAX checkpoint has no array {prefix + name!r}')
        used.add(prefix + name)
        return arrays[prefix + name]

    out = {
        'patch_embed.proj.weight': take(JAX_EMBED).permute(3, 2, 0, 1),
        'patch_embed.proj.bias': take('embedding/bias'),
        'cls_token': take('cls'),
        'pos_embed': take('Transformer/posembed_input/pos_embedding'),
        'norm.weight': take('Transformer/encoder_norm/scale'),
        'norm.bias': take('Transformer/encoder_norm/bias'),
    }
    depth = 0
    while f'{prefix}{JAX_BLOCK.format(depth)}LayerNorm_0/scale' in arrays:
        depth += 1
    for i in range(depth):
        src, dst = JAX_BLOCK.format(i), f'blocks.{i}.'
        mha = src + JAX_MHA
        out[dst + 'norm1.weight'] = take(src + 'LayerNorm_0/scale')
        out[dst + 'norm1.bias'] = take(src + 'LayerNorm_0/bias')
        out[dst + 'attn.qkv.weight'] = torch.cat(
            [take(f'{mha}{n}/kernel').flatten(1).T for n in ('query', 'key', 'value')])
        out[dst + 'attn.qkv.bias'] = torch.cat(
            [take(f'{mha}{n}/bias').reshape(-1) for n in ('query', 'key', 'value')])
        out[dst + 'attn.proj.weight'] = take(mha + 'out/kernel').flatten(0, 1).T
        out[dst + 'attn.proj.bias'] = take(mha + 'out/bias')
        out[dst + 'norm2.weight'] = take(src + 'LayerNorm_2/scale')
        out[dst + 'norm2.bias'] = take(src + 'LayerNorm_2/bias')
        for j in (0, 1):
            out[dst + f'mlp.fc{j + 1}.weight'] = take(f'{src}MlpBlock_3/Dense_{j}/kernel').T
            out[dst + f'mlp.fc{j + 1}.bias'] = take(f'{src}MlpBlock_3/Dense_{j}/bias')
    for name, ours in (('head', 'head'), ('pre_logits', 'pre_logits.fc')):
        if f'{prefix}{name}/kernel' in arrays:
            out[f'{ours}.weight'] = take(f'{name}/kernel').T
            out[f'{ours}.bias'] = take(f'{name}/bias')
    out.update({k: v for k, v in arrays.items() if k not in used})
    return {k: v.contiguous() for k, v in out.items()}


CONVERTERS = {
    'mmvitdyn': dict,
    'timm': convert_timm,
    'jax': convert_jax,
    'mmpretrain': convert_mmpretrain,
    'dyt': convert_dyt,
    'dinov2': convert_dinov2,
    'openai_clip': convert_openai_clip,
    'dynamicvit': convert_dynamicvit,
}


def convert_checkpoint(state_dict: Mapping[str, Any],
                       fmt: Optional[str] = None,
                       drop_dist_token: bool = False) -> Tuple[StateDict, str]:
    """Convert ``state_dict`` from ``fmt`` (detected when None) to mmvitdyn keys.

    Returns:
        tuple: (converted state dict, the format it came in).
    """
    fmt = detect_format(state_dict) if fmt is None else fmt
    if fmt not in CONVERTERS:
        raise ValueError(f'fmt={fmt!r} is not one of {FORMATS}')
    if fmt in ('timm', 'mmpretrain'):
        return CONVERTERS[fmt](state_dict, drop_dist_token=drop_dist_token), fmt
    return CONVERTERS[fmt](state_dict), fmt


def to_classifier(state_dict: Mapping[str, torch.Tensor]) -> StateDict:
    """mmvitdyn backbone keys -> an mmpretrain classifier checkpoint.

    Backbone tensors go under ``backbone.``; a linear ``head.{weight,bias}``
    becomes ``head.fc.*`` (mmpretrain's ``LinearClsHead``); other non-backbone
    tensors (``pre_logits``, ``head_dist``, ...) are dropped. The result loads
    with ``load_from`` into a classifier with a ViT / DyTViT / DynamicViT backbone.
    """
    backbone = re.compile('|'.join([*VIT_PARAM_GROUPS.values(), r'^norm\.', r'^predictors\.']))
    out = {f'backbone.{k}': v for k, v in state_dict.items() if backbone.match(k)}
    for name in ('weight', 'bias'):
        if f'head.{name}' in state_dict:
            out[f'head.fc.{name}'] = state_dict[f'head.{name}']
    return out


def describe_checkpoint(state_dict: Mapping[str, torch.Tensor],
                        num_heads: Optional[int] = None) -> Dict[str, Any]:
    """Architecture read off an mmvitdyn-format state dict.

    Args:
        state_dict (Mapping): Converted (mmvitdyn keys) state dict.
        num_heads (int, optional): Head count when known from the source (a
            fused qkv does not show it). Defaults to None.

    Returns:
        dict: ``num_tensors``, ``embed_dims``, ``num_layers``, ``num_heads``,
        ``feedforward_channels``, ``patch_size``, ``in_channels``, ``grid`` (None
        unless a square grid plus a class token), ``adapter_bottleneck`` and
        ``dispatch_parts`` (None / empty without DyT parts), the DyTViT switches
        ``keep_layers`` (first dispatched block, or None), ``adapter_scale``
        ('learnable' when stored, else None) and ``adapter_layer_norm`` (bool),
        and ``num_predictors`` (DynamicViT's; ``prune_loc`` needs as many).
    """
    patch = state_dict['patch_embed.proj.weight']
    layers = sorted(
        {int(m.group(1))
         for k in state_dict
         for m in [re.match(r'^blocks\.(\d+)\.', k)] if m})
    grid = None
    if 'pos_embed' in state_dict:
        tokens = state_dict['pos_embed'].shape[1] - 1 - ('dist_token' in state_dict)
        side = int(round(tokens**0.5))
        grid = (side, side) if side * side == tokens else None
    fc1 = state_dict.get('blocks.0.mlp.fc1.weight')
    down = state_dict.get('blocks.0.adapter.down.weight')
    gates = [
        m for k in state_dict
        for m in [re.match(r'^blocks\.(\d+)\.dispatchers\.(\w+)\.gate\.weight$', k)] if m
    ]
    parts = Counter(m.group(2) for m in gates)
    return dict(
        num_tensors=len(state_dict),
        embed_dims=patch.shape[0],
        num_layers=len(layers),
        num_heads=num_heads,
        feedforward_channels=None if fc1 is None else fc1.shape[0],
        patch_size=patch.shape[-1],
        in_channels=patch.shape[1],
        grid=grid,
        adapter_bottleneck=None if down is None else down.shape[0],
        dispatch_parts=dict(parts),
        keep_layers=min((int(m.group(1)) for m in gates), default=None),
        adapter_scale=LEARNABLE_SCALE if 'blocks.0.adapter.scale' in state_dict else None,
        adapter_layer_norm='blocks.0.adapter.norm.weight' in state_dict,
        num_predictors=sum(
            bool(re.match(r'^predictors\.\d+\.embed\.weight$', k)) for k in state_dict),
    )
