"""ToMe on the DyT ViT: token counts, a plain-torch reference, gradients, errors."""
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
from mmvitdyn.models import DyTViT
from mmvitdyn.models.token_reduction.tome import bipartite_soft_matching

PATCHES = 16  # the tiny 4 x 4 grid; 17 tokens with the class token


def randomise_adapters(model, seed=2):
    """Non-zero adapter up-projections, so the adapters change the tokens."""
    torch.manual_seed(seed)
    for block in model.blocks:
        torch.nn.init.normal_(block.adapter.up.weight, std=0.1)
    return model


def expected_counts(r_per_block, tokens=PATCHES + 1, extra=1):
    """Tokens after each block: ToMe removes min(r, (N - extra) // 2)."""
    counts = []
    for r in r_per_block:
        tokens -= min(r, (tokens - extra) // 2)
        counts.append(tokens)
    return counts


@pytest.mark.parametrize('r', [2, 5, [4, 0, 7], 20])
def test_tokens_after_each_block_follow_the_schedule(r):
    model = tiny(DyTViT, dispatch=None, token_reduction=dict(type='ToMe', r=r))
    out, = model(images(2))
    schedule = [r] * 3 if isinstance(r, int) else r
    # r=20 asks for more than half: 17 -> 9 -> 5 -> 3 tokens (class token kept).
    assert model.last_reduction.token_counts == expected_counts(schedule)
    assert out.shape == (2, TINY_ARCH['embed_dims'])


def reference_tome_forward(model, x, r):
    """The AdaptFormer + ToMe backbone in plain torch, one image at a time."""
    outs = []
    for image in x:
        tokens, _ = model.embed(image[None])
        tokens, size = tokens[0], torch.ones(tokens.shape[1])
        for block in model.blocks:
            attn = block.attn
            h = block.norm1(tokens)
            qkv = attn.qkv(h).view(len(h), 3, attn.num_heads, attn.head_dim)
            q, k, v = qkv[:, 0], qkv[:, 1], qkv[:, 2]  # (N, H, D)
            logits = torch.einsum('nhd,mhd->hnm', q, k) / math.sqrt(attn.head_dim)
            weights = (logits + size.log()).softmax(-1)  # proportional attention
            heads = torch.einsum('hnm,mhd->nhd', weights, v).reshape(len(h), -1)
            tokens = tokens + attn.proj(heads)
            # Bipartite soft matching on the mean keys: A = even, B = odd positions.
            keys = F.normalize(k.mean(1), dim=-1)
            a, b = list(range(0, len(tokens), 2)), list(range(1, len(tokens), 2))
            sim = keys[a] @ keys[b].T
            best = {
                i: (float(sim[j].max()), b[int(sim[j].argmax())])
                for j, i in enumerate(a) if i != 0
            }  # the class token (A, 0) never merges
            n_merge = min(r, (len(tokens) - 1) // 2)
            merged = sorted(best, key=lambda i: -best[i][0])[:n_merge]
            total = {j: tokens[j] * size[j] for j in b}
            weight = {j: size[j].clone() for j in b}
            for i in merged:
                total[best[i][1]] = total[best[i][1]] + tokens[i] * size[i]
                weight[best[i][1]] = weight[best[i][1]] + size[i]
            kept = [i for i in a if i not in merged]
            tokens = torch.stack([tokens[i] for i in kept] + [total[j] / weight[j] for j in b])
            size = torch.stack([size[i] for i in kept] + [weight[j] for j in b])
            tokens = tokens + block.mlp(block.norm2(tokens)) + block.adapter(tokens)
        outs.append(model.norm(tokens)[0])
    return torch.stack(outs)


@pytest.mark.parametrize('r', [3, 8])
def test_fast_path_equals_a_plain_torch_reference(r):
    model = randomise_adapters(tiny(DyTViT, dispatch=None, token_reduction=dict(type='ToMe', r=r)))
    x = images(3)
    with torch.no_grad():
        out, = model(x)
        expected = reference_tome_forward(model, x, r)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    # and merging changes the result: the reference is not that of the dense model
    model.token_reduction = None
    with torch.no_grad():
        dense, = model(x)
    assert (dense - out).abs().max() > 1e-3


def test_r_zero_is_the_model_without_tome():
    x = images(2)
    plain = randomise_adapters(tiny(DyTViT))
    merged = randomise_adapters(tiny(DyTViT, token_reduction=dict(type='ToMe', r=0)))
    with torch.no_grad():
        torch.testing.assert_close(merged(x)[0], plain(x)[0])
    assert merged.last_reduction.token_counts == [PATCHES + 1] * 3


def test_dyt_dispatch_gates_the_merged_tokens():
    """DyT + ToMe: the MLP dispatch masks of block i cover the tokens after its merge."""
    model = tiny(DyTViT, dispatch='mlp', token_reduction=dict(type='ToMe', r=3))
    model(images(2))
    counts = model.last_reduction.token_counts
    assert counts == [14, 11, 8]
    assert [m['mlp'].shape for m in model.dispatch_masks()] == [(2, n - 1) for n in counts]


@pytest.mark.parametrize('dispatch', [None, 'mlp'])
def test_gradients_reach_exactly_the_trainable_parts(dispatch):
    torch.manual_seed(0)
    model = tiny(DyTViT, dispatch=dispatch, token_reduction=dict(type='ToMe', r=3)).train()
    model.attach_objective('this test, which adds its own loss terms')
    head = torch.nn.Linear(TINY_ARCH['embed_dims'], 5)
    feats, = model(images(4))
    loss = F.cross_entropy(head(feats), torch.arange(4)) + model.rate_loss()
    loss.backward()
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    expected = {n for n, _ in model.named_parameters() if '.adapter.' in n or '.dispatchers.' in n}
    assert trainable == expected
    for name, p in model.named_parameters():
        assert (p.grad is not None) == (name in trainable), name
    # The zero-initialised up-projections get the signal first.
    assert all(float(b.adapter.up.weight.grad.abs().sum()) > 0 for b in model.blocks)
    if dispatch:
        assert all(
            float(b.dispatchers['mlp'].gate.weight.grad.abs().sum()) > 0 for b in model.blocks)
    assert head.weight.grad.abs().sum() > 0


@pytest.mark.parametrize('kwargs, message', [
    (dict(token_reduction=dict(type='ToMe', r=-1)), 'ToMe r=-1 must be an int >= 0'),
    (dict(token_reduction=dict(type='ToMe', r=[1, 2])), r'ToMe r=\[1, 2\] gives 2 values'),
    (dict(dispatch='attn', token_reduction=dict(type='ToMe')), "dispatch='attn' is not allowed"),
    (dict(out_type='featmap', token_reduction=dict(type='ToMe')), "out_type='cls_token'"),
])
def test_bad_settings_name_field_and_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tiny(DyTViT, **kwargs)


@pytest.mark.parametrize('name, dispatch, bottleneck', [
    ('vit-base-p16-adaptformer-tome_d64_8xb128-100e_cifar100-224px.py', None, 64),
    ('vit-base-p16-dyt-tome_d64_8xb128-100e_cifar100-224px.py', 'mlp', 64),
    ('vit-base-p16-adaptformer-tome_d8_1xb64-100e_vtab1k-224px.py', None, 8),
    ('vit-base-p16-dyt-tome_d8_1xb64-100e_vtab1k-224px.py', 'mlp', 8),
])
def test_configs_train_their_classifier_with_tome(name, dispatch, bottleneck):
    """The configs' settings, and their classifier (complete pass and distillation of
    DyT included) computing finite losses on the tiny ViT."""
    cfg = copy.deepcopy(dyt_config(name))
    backbone = cfg.model.backbone
    assert (backbone.dispatch, backbone.adapter_cfg.bottleneck) == (dispatch, bottleneck)
    assert backbone.token_reduction == dict(type='ToMe', r=10)  # matched FLOPs (see config)
    shrink_to_tiny(backbone)
    backbone.token_reduction.r = 3
    cfg.model.head.in_channels = TINY_ARCH['embed_dims']
    init_default_scope('mmpretrain')
    torch.manual_seed(0)
    model = MODELS.build(cfg.model)
    model.init_weights()
    losses = model.loss(images(2), [DataSample().set_gt_label(i) for i in range(2)])
    assert all(torch.isfinite(v) for v in losses.values())
    assert model.backbone.last_reduction.token_counts == [14, 11, 8]


@pytest.mark.parametrize('extra', [1, 3, 6])
def test_extra_tokens_stay_in_front_in_their_order(extra):
    """Class, distillation and register tokens are never merged and keep their positions
    (a distillation token is read at position 1 after the blocks)."""
    torch.manual_seed(0)
    x = torch.randn(2, extra + 16, 8)
    merge = bipartite_soft_matching(torch.randn(2, extra + 16, 4), r=5, num_prefix_tokens=extra)
    out = merge(x)
    assert out.shape == (2, extra + 11, 8)
    torch.testing.assert_close(out[:, :extra], x[:, :extra], rtol=0, atol=0)
