"""Google's Flax ViT ``.npz`` layout (original in21k, AugReg)."""
from typing import Any, Mapping

import numpy as np
import torch

from .registry import CHECKPOINT_FORMATS, CheckpointFormat, StateDict

JAX_EMBED = 'embedding/kernel'
JAX_BLOCK = 'Transformer/encoderblock_{}/'
JAX_MHA = 'MultiHeadDotProductAttention_1/'


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


@CHECKPOINT_FORMATS.register_module(name='jax')
class JaxFormat(CheckpointFormat):
    """Flax arrays, optionally under a prefix such as ``opt/target/``."""
    PRIORITY = 10

    def detect(self, state_dict: Mapping[str, Any]) -> bool:
        return any(k.endswith(JAX_EMBED) for k in state_dict)

    def convert(self, state_dict: Mapping[str, Any], **options) -> StateDict:
        return convert_jax(state_dict)
