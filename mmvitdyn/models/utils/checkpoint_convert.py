"""Foreign ViT checkpoints to mmvitdyn parameter names (pure functions).

Formats, as :func:`detect_format` names them:

- ``'mmvitdyn'``: our own keys, with DyT parts (``blocks.{i}.adapter.*``,
  ``blocks.{i}.dispatchers.*``). Nothing to convert.
- ``'timm'``: timm / DeiT / AugReg ``.pth`` state dicts. Our ViT uses timm's
  names, so conversion only checks that the variant is one our ViT computes
  (no layer scale, register tokens, pre-norm or q/k norm) and handles DeiT's
  distillation token. Heads (``head.*``) are left for the loader to ignore.
- ``'jax'``: Google's Flax ``.npz`` (original in21k, AugReg), loaded as a
  name -> array mapping: ``embedding/kernel`` (HWIO), ``cls``,
  ``Transformer/posembed_input/pos_embedding``,
  ``Transformer/encoderblock_{i}/{LayerNorm_0, MultiHeadDotProductAttention_1,
  LayerNorm_2, MlpBlock_3/Dense_{0,1}}``, ``Transformer/encoder_norm``, with
  an optional prefix such as ``opt/target/``. q/k/v kernels are (C, H, D),
  the output kernel is (H, D, C), dense kernels are (in, out).
- ``'mmpretrain'``: mmpretrain ``VisionTransformer`` (``patch_embed.projection``,
  ``layers.{i}.{ln1, attn, ln2, ffn.layers.0.0, ffn.layers.1}``, final ``ln1``),
  optionally under ``backbone.`` as in a classifier checkpoint.
- ``'dyt'``: the official DyT code (github.com/NUS-HPC-AI-Lab/Dynamic-Tuning,
  ``models/vision_transformer_IN21K.py`` and ``models/dynamic_adapter.py``): a
  timm ViT plus ``blocks.{i}.adaptmlp.{down_proj, up_proj}`` (the adapter) and
  ``blocks.{i}.mlp_token_select.mlp_head`` (the MLP dispatcher's Linear(C, 1)).
  The adapter scale is a hyper-parameter there, not a tensor: set
  ``adapter_cfg.scale`` to the value the checkpoint was trained with.

Keys a converter does not know are passed through unchanged, so the loader
reports them; features our ViT cannot compute raise a ``ValueError``.
"""
import re
from collections import Counter
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np
import torch

from ..layers import is_dyt_param

StateDict = Dict[str, torch.Tensor]

FORMATS = ('mmvitdyn', 'timm', 'jax', 'mmpretrain', 'dyt')

# Key fragments (matched against '.' + key) of variants our ViT does not compute.
TIMM_UNSUPPORTED = {
    'reg_token': 'register tokens',
    '.norm_pre.': 'a norm before the blocks (CLIP-style pre-norm)',
    '.ls1.': 'layer scale',
    '.ls2.': 'layer scale',
    '.q_norm.': 'query/key normalisation',
    '.k_norm.': 'query/key normalisation',
}
MMPRETRAIN_UNSUPPORTED = {
    '.pre_norm.': 'a norm before the blocks (CLIP-style pre-norm)',
    '.gamma1.': 'layer scale',
    '.gamma2.': 'layer scale',
}
DYT_UNSUPPORTED = {
    '.adapter_layer_norm_before.': "an adapter LayerNorm (ffn_adapter_layernorm_option 'in'/'out'; "
    "DyT's released recipe uses 'none')",
    '.adaptmlp.scale': "a learnable adapter scale ('learnable_scalar')",
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
    (r'^blocks\.(\d+)\.mlp_token_select\.mlp_head\.', r'blocks.\1.dispatchers.mlp.gate.'),
)

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
    if any(k.startswith('blocks.') and is_dyt_param(k) for k in keys):
        return 'mmvitdyn'
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
    """Remove DeiT's distillation token and its position-embedding row, or refuse."""
    if 'dist_token' not in state_dict:
        return state_dict
    if not drop_dist_token:
        raise ValueError(
            "checkpoint is a distilled DeiT (it has 'dist_token'); mmvitdyn's ViT has a class "
            'token only. Use the non-distilled DeiT weights, or pass drop_dist_token=True '
            '(--drop-dist-token) to drop the distillation token and its position embedding '
            '(the class-token features then differ from those of the distilled model)')
    state_dict = dict(state_dict)
    del state_dict['dist_token']
    pos_embed = state_dict['pos_embed']
    state_dict['pos_embed'] = torch.cat([pos_embed[:, :1], pos_embed[:, 2:]], dim=1)
    return state_dict


def convert_timm(state_dict: Mapping[str, torch.Tensor],
                 drop_dist_token: bool = False) -> StateDict:
    """timm / DeiT / AugReg ``.pth`` -> mmvitdyn (the names already agree).

    Args:
        state_dict (Mapping): A timm ``VisionTransformer`` state dict (DeiT's
            ``model`` wrapper already removed).
        drop_dist_token (bool): For distilled DeiT: drop ``dist_token`` and its
            position embedding instead of raising. Defaults to False.

    Returns:
        dict: The state dict with mmvitdyn keys; heads pass through.
    """
    _check_supported(state_dict, TIMM_UNSUPPORTED, 'timm')
    return _drop_dist_token(dict(state_dict), drop_dist_token)


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


def convert_dyt(state_dict: Mapping[str, torch.Tensor]) -> StateDict:
    """Official DyT checkpoint (``model`` wrapper removed) -> mmvitdyn.

    ``adaptmlp.{down,up}_proj`` become ``adapter.{down,up}`` and
    ``mlp_token_select.mlp_head`` becomes ``dispatchers.mlp.gate`` (the
    official code implements MLP dispatch only); the ViT part is timm's.
    """
    _check_supported(state_dict, DYT_UNSUPPORTED, 'DyT')
    return convert_timm({_rename(k, DYT_RENAMES): v for k, v in state_dict.items()})


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
    with ``load_from`` into a classifier with a ViT / DyTViT backbone.
    """
    backbone = re.compile(r'^(patch_embed\.|cls_token$|pos_embed$|blocks\.|norm\.)')
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
        dict: ``embed_dims``, ``num_layers``, ``num_heads``,
        ``feedforward_channels``, ``patch_size``, ``in_channels``, ``grid``
        (None when the position embedding is not a square grid plus a class
        token), ``num_tensors``, ``adapter_bottleneck`` and ``dispatch_parts``
        (DyT parts; None / empty when absent).
    """
    patch = state_dict['patch_embed.proj.weight']
    layers = sorted(
        {int(m.group(1))
         for k in state_dict
         for m in [re.match(r'^blocks\.(\d+)\.', k)] if m})
    grid = None
    if 'pos_embed' in state_dict:
        tokens = state_dict['pos_embed'].shape[1] - 1
        side = int(round(tokens**0.5))
        grid = (side, side) if side * side == tokens else None
    fc1 = state_dict.get('blocks.0.mlp.fc1.weight')
    down = state_dict.get('blocks.0.adapter.down.weight')
    parts = Counter(
        m.group(1) for k in state_dict
        for m in [re.match(r'^blocks\.\d+\.dispatchers\.(\w+)\.gate\.weight$', k)] if m)
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
    )
