"""State dicts of the tiny ViT in each source layout the checkpoint formats read.

``FORMAT_FIXTURES`` maps each registered format name to a builder of one
state dict in that layout, written here key by key (not by our converters).
"""
import numpy as np
import torch
from mmpretrain.models import VisionTransformer

from helpers.models import IMG_SIZE, PATCH_SIZE, TINY_ARCH, tiny
from mmvitdyn.models import DyTViT

C, H, MLP, DEPTH = (
    TINY_ARCH[k] for k in ('embed_dims', 'num_heads', 'feedforward_channels', 'num_layers'))
D, PATCH, GRID = C // H, PATCH_SIZE, IMG_SIZE // PATCH_SIZE
ADAPTER = dict(bottleneck=4, scale=1.0)
# Official DyT names (NUS-HPC-AI-Lab/Dynamic-Tuning, models/vision_transformer_IN21K.py).
OFFICIAL_DYT_NAMES = {
    '.adapter.down.': '.adaptmlp.down_proj.',
    '.adapter.up.': '.adaptmlp.up_proj.',
    '.dispatchers.mlp.gate.': '.mlp_token_select.mlp_head.',
}
# OpenAI CLIP's names of our block parts (openai/CLIP, clip/model.py).
OPENAI_CLIP_BLOCK = {
    'norm1': 'ln_1',
    'norm2': 'ln_2',
    'attn.qkv': 'attn.in_proj',
    'attn.proj': 'attn.out_proj',
    'mlp.fc1': 'mlp.c_fc',
    'mlp.fc2': 'mlp.c_proj',
}


def tiny_dyt(**kwargs):
    return tiny(DyTViT, adapter_cfg=ADAPTER, **kwargs)


def official_dyt(model):
    """``model``'s tensors under the official DyT names, with a 5-class head."""
    state = {}
    for key, value in model.state_dict().items():
        for ours, theirs in OFFICIAL_DYT_NAMES.items():
            key = key.replace(ours, theirs)
        state[key] = value.clone()
    state['head.weight'], state['head.bias'] = torch.randn(5, C), torch.randn(5)
    return state


def fake_jax(prefix='', seed=0):
    """A Flax ViT .npz in the original layout: (C, H, D) q/k/v kernels, HWIO patch kernel."""
    rng = np.random.default_rng(seed)

    def r(*shape, offset=0.):
        return (offset + 0.2 * rng.standard_normal(shape)).astype(np.float32)

    arrays = {
        'embedding/kernel': r(PATCH, PATCH, 3, C),
        'embedding/bias': r(C),
        'cls': r(1, 1, C),
        'Transformer/posembed_input/pos_embedding': r(1, 1 + GRID * GRID, C),
        'Transformer/encoder_norm/scale': r(C, offset=1.),
        'Transformer/encoder_norm/bias': r(C),
        'head/kernel': r(C, 5),
        'head/bias': r(5),
    }
    for i in range(DEPTH):
        block = f'Transformer/encoderblock_{i}/'
        mha = block + 'MultiHeadDotProductAttention_1/'
        for norm in ('LayerNorm_0', 'LayerNorm_2'):
            arrays[f'{block}{norm}/scale'], arrays[f'{block}{norm}/bias'] = r(C, offset=1.), r(C)
        for name in ('query', 'key', 'value'):
            arrays[f'{mha}{name}/kernel'], arrays[f'{mha}{name}/bias'] = r(C, H, D), r(H, D)
        arrays[f'{mha}out/kernel'], arrays[f'{mha}out/bias'] = r(H, D, C), r(C)
        for j, (fan_in, fan_out) in enumerate([(C, MLP), (MLP, C)]):
            dense = f'{block}MlpBlock_3/Dense_{j}/'
            arrays[dense + 'kernel'], arrays[dense + 'bias'] = r(fan_in, fan_out), r(fan_out)
    return {prefix + k: v for k, v in arrays.items()}


def timm_vit():
    """timm's ViT keys (ours share them) with a 5-class head."""
    return {**tiny().state_dict(), 'head.weight': torch.zeros(5, C), 'head.bias': torch.zeros(5)}


def mmpretrain_vit():
    """mmpretrain's ``VisionTransformer`` of the tiny shape, under ``backbone.``."""
    vit = VisionTransformer(arch=TINY_ARCH, img_size=IMG_SIZE, patch_size=PATCH_SIZE)
    return {f'backbone.{k}': v for k, v in vit.state_dict().items()}


def official_dynamicvit():
    """A timm ViT plus two official prediction modules ``score_predictor.{k}``."""
    state = timm_vit()
    for k in range(2):
        p = f'score_predictor.{k}.'
        state[p + 'in_conv.0.weight'], state[p + 'in_conv.0.bias'] = torch.ones(C), torch.zeros(C)
        state[p + 'in_conv.1.weight'], state[p + 'in_conv.1.bias'] = torch.eye(C), torch.zeros(C)
        for index, (out, inp) in zip((0, 2, 4), ((C // 2, C), (C // 4, C // 2), (2, C // 4))):
            state[f'{p}out_conv.{index}.weight'] = torch.zeros(out, inp)
            state[f'{p}out_conv.{index}.bias'] = torch.zeros(out)
    return state


def original_dinov2():
    """facebookresearch/dinov2's keys: blocks in chunks of 2 (``blocks.{chunk}.{i}``),
    ``register_tokens`` and a ``mask_token``."""
    state = {}
    for key, value in tiny().state_dict().items():
        if key.startswith('blocks.'):
            index = int(key.split('.')[1])
            key = f'blocks.{index // 2}.{key[len("blocks."):]}'
        state[key] = value
    state['register_tokens'], state['mask_token'] = torch.zeros(1, 4, C), torch.zeros(1, C)
    return state


def openai_clip():
    """OpenAI CLIP's ``visual.*`` image tower and one text-tower key."""
    vit = tiny().state_dict()
    state = {
        'visual.conv1.weight': vit['patch_embed.proj.weight'],
        'visual.class_embedding': vit['cls_token'].flatten(),
        'visual.positional_embedding': vit['pos_embed'][0],
        'visual.ln_pre.weight': torch.ones(C),
        'visual.ln_pre.bias': torch.zeros(C),
        'visual.ln_post.weight': vit['norm.weight'],
        'visual.ln_post.bias': vit['norm.bias'],
        'visual.proj': torch.zeros(C, 12),
        'positional_embedding': torch.zeros(7, C),
    }
    for i in range(DEPTH):
        for ours, theirs in OPENAI_CLIP_BLOCK.items():
            for name in ('weight', 'bias'):
                glue = '_' if theirs == 'attn.in_proj' else '.'
                state[f'visual.transformer.resblocks.{i}.{theirs}{glue}{name}'] = \
                    vit[f'blocks.{i}.{ours}.{name}']
    return state


FORMAT_FIXTURES = {
    'jax': fake_jax,
    'mmpretrain': mmpretrain_vit,
    'dyt': lambda: official_dyt(tiny_dyt()),
    'dynamicvit': official_dynamicvit,
    'mmvitdyn': lambda: tiny_dyt().state_dict(),
    'openai_clip': openai_clip,
    'dinov2': original_dinov2,
    'timm': timm_vit,
}
