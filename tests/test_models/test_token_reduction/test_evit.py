"""EViT on the DyT ViT: token counts, a plain-torch reference, gradients, errors."""
import copy
import math

import pytest
import torch
import torch.nn.functional as F
from mmengine.registry import init_default_scope
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from helpers.configs import dyt_config
from helpers.models import TINY_ARCH, images, shrink_to_tiny, tiny
from mmvitdyn.models import AdapterViT, DyTViT

PATCHES = 16  # the tiny 4 x 4 grid; 17 tokens with the class token


def evit(out_type='cls_token', **kwargs):
    """Non-zero adapters, so they change the tokens, and peaked attention whose heads
    disagree: at the init's std 0.02 the class token's attention is within 0.0015 of
    the uniform 1 / 17 in every head, and averaging the heads' logits instead of their
    attention moves it by 5e-6 only; at std 0.1 it peaks at 0.34, heads differ by up
    to 0.22 and the two averages by 3e-3."""
    torch.manual_seed(3)
    model = tiny(AdapterViT, out_type=out_type, token_reduction=dict(type='EViT', **kwargs))
    for block in model.blocks:
        torch.nn.init.normal_(block.adapter.up.weight, std=0.1)
        torch.nn.init.normal_(block.attn.qkv.weight, std=0.1)
    return model


@pytest.mark.parametrize(
    'keep_rate, locations, fuse, counts',
    [
        # 16 patches -> ceil(0.7 * 16) = 12 kept + 1 fused; 13 -> ceil(9.1) = 10 + 1.
        (0.7, (0, 2), True, [1 + 13, 1 + 13, 1 + 11]),
        (0.5, (1, ), False, [17, 1 + 8, 1 + 8]),
        (0.25, (0, 1, 2), True, [1 + 5, 1 + 3, 1 + 2]),
    ])
def test_tokens_after_each_block_follow_the_settings(keep_rate, locations, fuse, counts):
    model = evit(keep_rate=keep_rate, locations=locations, fuse=fuse)
    out, = model(images(2))
    assert model.last_reduction.token_counts == counts
    assert out.shape == (2, TINY_ARCH['embed_dims'])


def reference_evit(model, image, keep_rate, locations):
    """The AdaptFormer + EViT backbone in plain torch on one image (3, H, W): its
    tokens after the final norm (N', C)."""
    tokens = model.embed(image[None])[0][0]
    for index, block in enumerate(model.blocks):
        attn = block.attn
        h = block.norm1(tokens)
        qkv = attn.qkv(h).view(len(h), 3, attn.num_heads, attn.head_dim)
        q, k, v = qkv[:, 0], qkv[:, 1], qkv[:, 2]  # (N, H, D)
        weights = (torch.einsum('nhd,mhd->hnm', q, k) / math.sqrt(attn.head_dim)).softmax(-1)
        heads = torch.einsum('hnm,mhd->nhd', weights, v).reshape(len(h), -1)
        tokens = tokens + attn.proj(heads)
        if index in locations:
            attentiveness = weights[:, 0, 1:].mean(0)  # class token -> patches
            ranked = sorted(range(len(attentiveness)), key=lambda i: -attentiveness[i])
            keep = math.ceil(keep_rate * len(ranked))
            patches = tokens[1:]
            fused = sum(attentiveness[i] * patches[i] for i in ranked[keep:])
            tokens = torch.stack([tokens[0]] + [patches[i] for i in ranked[:keep]] + [fused])
        tokens = tokens + block.mlp(block.norm2(tokens)) + block.adapter(tokens)
    return model.norm(tokens)


@pytest.mark.parametrize('keep_rate, locations, size, counts', [
    (0.7, (0, 2), 32, [1 + 13, 1 + 13, 1 + 11]),
    (0.4, (1, 2), 32, [17, 1 + 8, 1 + 5]),
    (0.7, (0, 1, 2), (24, 40), [1 + 12, 1 + 10, 1 + 8]),
])
def test_fast_path_equals_a_plain_torch_reference(keep_rate, locations, size, counts):
    """16 and 15 (odd) patches: 15 -> ceil(10.5) = 11 + 1 fused -> 9 + 1 -> 7 + 1."""
    model = evit(keep_rate=keep_rate, locations=locations)
    x = images(3, size=size)
    with torch.no_grad():
        out, = model(x)
        assert model.last_reduction.token_counts == counts
        expected = torch.stack([reference_evit(model, im, keep_rate, locations)[0] for im in x])
        torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
        model.token_reduction = None
        assert (model(x)[0] - out).abs().max() > 1e-3  # the reduction changes the output


def test_average_pooling_is_the_mean_of_the_kept_and_fused_tokens():
    """out_type='avg_featmap': EViT's tokens carry no patch counts; the fused token
    counts as one token."""
    model = evit(keep_rate=0.5, locations=(0, 2), out_type='avg_featmap')
    x = images(3, size=(24, 40))
    with torch.no_grad():
        out, = model(x)
        expected = torch.stack([reference_evit(model, im, 0.5, (0, 2))[1:].mean(0) for im in x])
    assert model.last_reduction.token_counts == [1 + 8 + 1, 1 + 9, 1 + 5 + 1]
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize('dispatch', [None, 'mlp'])
def test_gradients_reach_exactly_the_trainable_parts(dispatch):
    torch.manual_seed(0)
    model = tiny(
        DyTViT, dispatch=dispatch, token_reduction=dict(type='EViT', locations=(1, ))).train()
    model.attach_objective('this test, which adds its own loss terms')
    head = torch.nn.Linear(TINY_ARCH['embed_dims'], 5)
    feats, = model(images(4))
    (F.cross_entropy(head(feats), torch.arange(4)) + model.rate_loss()).backward()
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable == {
        n
        for n, _ in model.named_parameters() if '.adapter.' in n or '.dispatchers.' in n
    }
    for name, p in model.named_parameters():
        assert (p.grad is not None) == (name in trainable), name
    assert all(float(b.adapter.up.weight.grad.abs().sum()) > 0 for b in model.blocks)
    if dispatch:
        # block 1's dispatcher gates the reduced tokens (1 + 12 kept + 1 fused)
        assert model.dispatch_masks()[1]['mlp'].shape == (4, 13)
        assert all(
            float(b.dispatchers['mlp'].gate.weight.grad.abs().sum()) > 0 for b in model.blocks)
    assert head.weight.grad.abs().sum() > 0


@pytest.mark.parametrize('kwargs, message', [
    (dict(keep_rate=0), r'EViT keep_rate=0 must be a finite number in \(0, 1\]'),
    (dict(locations=(2, 1)), r'EViT locations=\(2, 1\) must be increasing'),
    (dict(locations=(1, 3)), r'EViT locations=\(1, 3\) must lie in 0..2 for 3 blocks'),
])
def test_bad_settings_name_field_and_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tiny(DyTViT, token_reduction=dict(type='EViT', **kwargs))


@pytest.mark.parametrize('name, bottleneck', [
    ('vit-b-p16-adaptformer-evit_d64_8xb128-100e_cifar100-224px.py', 64),
    ('vit-b-p16-adaptformer-evit_d8_1xb64-100e_vtab1k-224px.py', 8),
])
def test_configs_train_their_classifier_with_evit(name, bottleneck):
    cfg = copy.deepcopy(dyt_config(name))
    backbone = cfg.model.backbone
    assert (backbone.type, backbone.adapter_cfg.bottleneck) == ('AdapterViT', bottleneck)
    assert backbone.token_reduction == dict(
        type='EViT', keep_rate=0.7, locations=(3, 6, 9), fuse=True)  # the paper's ViT-B
    shrink_to_tiny(backbone)
    backbone.token_reduction.locations = (1, 2)
    cfg.model.head.in_channels = TINY_ARCH['embed_dims']
    init_default_scope('mmpretrain')
    torch.manual_seed(0)
    model = MODELS.build(cfg.model)
    model.init_weights()
    losses = model.loss(images(2), [DataSample().set_gt_label(i) for i in range(2)])
    assert all(torch.isfinite(v) for v in losses.values())
    assert model.backbone.last_reduction.token_counts == [17, 1 + 13, 1 + 11]
