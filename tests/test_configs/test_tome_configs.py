"""The ToMe configs of ToMe's own settings, on the tiny ViT: the decreasing
``(r, inflect)`` schedule and the MAE averaging head with size-weighted pooling.
How the merges and sizes are computed is checked against a plain-torch ToMe in
tests/test_models/test_token_reduction/test_tome.py; here, that the configs
switch them on."""
import copy

import pytest
import torch
from mmengine.registry import init_default_scope
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from helpers.configs import dyt_config
from helpers.models import TINY_ARCH, images, shrink_to_tiny

DECREASING = {
    'vit-b-p16-adaptformer-tome-decreasing_d64_8xb128-100e_cifar100-224px.py': None,
    'vit-b-p16-dyt-tome-decreasing_d64_8xb128-100e_cifar100-224px.py': 'mlp',
}
MAE_AVG = 'vit-b-p16-mae-dyt-tome_d64_avgpool_8xb128-100e_cifar100-224px.py'
# ToMe (github.com/facebookresearch/ToMe at af95e4b) on MAE: README.md:115 sets
# prop_attn=True only for the MAE models it trained with ToMe, False for
# off-the-shelf ones; tome/patch/mae.py:71 apply_patch defaults to
# prop_attn=False, its docstring (:79) saying the same for MAE models. The frozen
# ViT here is MAE's pretrained checkpoint, never trained with ToMe.
MAE_PROP_ATTN = False
MAE_PRETRAINED = 'checkpoints/mae-vit-base-p16.pth'


def tiny_model(name: str, **backbone):
    """The config's classifier on the tiny ViT (``backbone`` overrides), in eval mode."""
    cfg = copy.deepcopy(dyt_config(name))
    shrink_to_tiny(cfg.model.backbone)
    cfg.model.backbone.update(backbone)
    cfg.model.head.in_channels = TINY_ARCH['embed_dims']
    init_default_scope('mmpretrain')
    torch.manual_seed(0)
    model = MODELS.build(cfg.model)
    model.init_weights()
    return model.eval()


@pytest.mark.parametrize('name', [*sorted(DECREASING), MAE_AVG])
def test_config_settings_and_losses(name):
    backbone = dyt_config(name).model.backbone
    if name == MAE_AVG:
        assert (backbone.dispatch, backbone.out_type) == ('mlp', 'avg_featmap')
        assert backbone.token_reduction == dict(type='ToMe', r=16, prop_attn=MAE_PROP_ATTN)
        assert backbone.init_cfg.checkpoint == MAE_PRETRAINED
    else:
        assert (backbone.get('dispatch'), backbone.out_type) == (DECREASING[name], 'cls_token')
        assert backbone.token_reduction == dict(type='ToMe', r=(8, -1))
    model = tiny_model(name).train()
    losses = model.loss(images(2), [DataSample().set_gt_label(i) for i in range(2)])
    assert losses and all(torch.isfinite(v) for v in losses.values())


@pytest.mark.parametrize('name', sorted(DECREASING))
def test_decreasing_schedule_merges_parse_rs_line(name):
    """r = (8, -1) over 4 blocks, 64 patches: ToMe's parse_r rule written out,
    lo = int(r (1 - inflect)), then int(lo + i (2r - 2 lo) / (L - 1)) (16, 10.67,
    5.33, 0 truncated), each block merging min(r_i, patches // 2)."""
    r, inflect, num_layers, patches = 8, -1, 4, 64
    lo = int(r * (1 - inflect))
    step = (2 * r - 2 * lo) / (num_layers - 1)
    wanted = [int(lo + step * i) for i in range(num_layers)]
    assert wanted == [16, 10, 5, 0]
    tokens, expected = 1 + patches, []
    for merges in wanted:
        tokens -= min(merges, (tokens - 1) // 2)
        expected.append(tokens)
    model = tiny_model(name, arch=dict(TINY_ARCH, num_layers=num_layers), img_size=64)
    with torch.no_grad():
        model.backbone(images(2, size=64))
    assert model.backbone.last_reduction.token_counts == expected == [49, 39, 34, 34]


def test_mae_head_pools_tokens_by_the_patches_they_hold():
    """36 patches, r = 16 capped at half: 36 -> 20 -> 10 -> 5 patch tokens (an
    odd count last); the output is sum(size * x) / 36 over the final-normed patch
    tokens, not their plain mean. Peaked attention (std 0.1) and working
    adapters make the tokens differ."""
    model = tiny_model(MAE_AVG, img_size=48)
    backbone = model.backbone
    for block in backbone.blocks:
        torch.nn.init.normal_(block.attn.qkv.weight, std=0.1)
        torch.nn.init.normal_(block.adapter.up.weight, std=0.1)
    normed = []
    hook = backbone.norm.register_forward_hook(lambda module, args, out: normed.append(out))
    with torch.no_grad():
        out, = backbone(images(3, size=48))
    hook.remove()
    tokens, size = normed[0], backbone.last_reduction.size
    assert tokens.shape == (3, 6, TINY_ARCH['embed_dims'])
    assert backbone.last_reduction.token_counts == [21, 11, 6]
    assert torch.equal(size[:, 0], torch.ones(3, 1))  # the class token
    assert torch.equal(size[:, 1:].sum(dim=1), torch.full((3, 1), 36.))
    assert torch.equal(size, size.round()) and size[:, 1:].max() > size[:, 1:].min()
    expected = (tokens[:, 1:] * size[:, 1:]).sum(dim=1) / 36
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)
    assert (out - tokens[:, 1:].mean(dim=1)).abs().max() > 1e-2


def test_mae_tome_treats_the_frozen_mae_as_off_the_shelf():
    """The MAE ViT's attention never trains (only adapters, dispatchers and the
    head do), so it stays the off-the-shelf MAE's: ToMe adds no log(size) to its
    attention logits, as ToMe's MAE patch does for such models."""
    model = tiny_model(MAE_AVG)
    attention = {n: p for n, p in model.backbone.named_parameters() if '.attn.' in n}
    assert attention and not any(p.requires_grad for p in attention.values())
    assert model.backbone.token_reduction.prop_attn is MAE_PROP_ATTN
