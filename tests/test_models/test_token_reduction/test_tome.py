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
from mmvitdyn.models import AdapterViT, DyTViT
from mmvitdyn.models.token_reduction.tome import bipartite_soft_matching, per_block_r

PATCHES = 16  # the tiny 4 x 4 grid; 17 tokens with the class token
ODD_GRID = (24, 40)  # 3 x 5 = 15 patches: A and B sets of different sizes


def randomise(model, seed=2):
    """Non-zero adapter up-projections, so the adapters change the tokens, and
    peaked attention: at the init's std 0.02 the largest weight is 0.062 against
    the uniform 1 / 17 = 0.059 (heads then agree and proportional attention
    barely moves it); at std 0.1 the class token's row peaks at 0.34 and heads
    differ by up to 0.22."""
    torch.manual_seed(seed)
    for block in model.blocks:
        torch.nn.init.normal_(block.adapter.up.weight, std=0.1)
        torch.nn.init.normal_(block.attn.qkv.weight, std=0.1)
    return model


def expected_counts(r_per_block, tokens=PATCHES + 1, extra=1):
    """Tokens after each block: ToMe removes min(r, (N - extra) // 2)."""
    counts = []
    for r in r_per_block:
        tokens -= min(r, (tokens - extra) // 2)
        counts.append(tokens)
    return counts


@pytest.mark.parametrize('r, counts', [(2, [15, 13, 11]), (5, [12, 7, 4]), ([4, 0, 7], [13, 13, 7]),
                                       (20, [9, 5, 3]), ([3, 20, 20], [14, 8, 5])])
def test_tokens_after_each_block_follow_the_schedule(r, counts):
    """r=20 asks for more than half: 16 -> 8 -> 4 -> 2 patch tokens; [3, 20, 20] meets
    the cap on odd counts: 13 patches merge 6 (A holds 6 of them), 7 merge 3."""
    model = tiny(AdapterViT, token_reduction=dict(type='ToMe', r=r))
    out, = model(images(2))
    schedule = [r] * 3 if isinstance(r, int) else r
    assert model.last_reduction.token_counts == expected_counts(schedule) == counts
    assert out.shape == (2, TINY_ARCH['embed_dims'])


# parse_r(num_layers, (r, inflect)) of ToMe's public tome/utils.py, run once: the
# schedules it gives, in its own floating-point arithmetic ((15, 1) over 12 blocks
# ends at 29, one short of the exact 30).
PARSE_R = {
    (8, -1, 12): [16, 14, 13, 11, 10, 8, 7, 5, 4, 2, 1, 0],
    (8, 0, 12): [8] * 12,
    (8, 1, 12): [0, 1, 2, 4, 5, 7, 8, 10, 11, 13, 14, 16],
    (13, -0.5, 12): [19, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7],
    (15, 1, 12): [0, 2, 5, 8, 10, 13, 16, 19, 21, 24, 27, 29],
    (5, -1, 3): [10, 5, 0],
    (4, 0.5, 3): [2, 4, 6],
    (3, 1, 5): [0, 1, 3, 4, 6],
}


@pytest.mark.parametrize('r, inflect, num_layers', list(PARSE_R))
def test_inflected_r_is_parse_rs_schedule(r, inflect, num_layers):
    """(r, inflect): a line from lo = int(r (1 - inflect)) to 2r - lo, truncated."""
    lo = int(r * (1.0 - inflect))
    step = (2 * r - lo - lo) / (num_layers - 1)
    expected = [int(lo + step * i) for i in range(num_layers)]
    assert expected == PARSE_R[r, inflect, num_layers]
    assert per_block_r((r, inflect), num_layers) == expected


@pytest.mark.parametrize('r, schedule', [((2, -1), [4, 2, 0]), ((4, 0.5), [2, 4, 6]),
                                         ((5, -1), [10, 5, 0]), ((3, 0), [3, 3, 3])])
def test_inflected_r_sets_the_merges_of_each_block(r, schedule):
    """The tiny ViT's 3 blocks merge the schedule (capped at half the patch tokens)."""
    model = tiny(AdapterViT, token_reduction=dict(type='ToMe', r=r))
    model(images(2))
    assert model.last_reduction.token_counts == expected_counts(schedule)


def reference_tome(model, image, r_per_block, prop_attn=True):
    """The AdaptFormer + ToMe backbone in plain torch on one image (3, H, W): its
    tokens after the final norm (N', C) and their sizes (N', )."""
    tokens, _ = model.embed(image[None])
    tokens, size = tokens[0], torch.ones(tokens.shape[1])
    for block, r in zip(model.blocks, r_per_block):
        attn = block.attn
        h = block.norm1(tokens)
        qkv = attn.qkv(h).view(len(h), 3, attn.num_heads, attn.head_dim)
        q, k, v = qkv[:, 0], qkv[:, 1], qkv[:, 2]  # (N, H, D)
        logits = torch.einsum('nhd,mhd->hnm', q, k) / math.sqrt(attn.head_dim)
        if prop_attn:  # key m counts as the size[m] patches it holds
            logits = logits + size.log()
        heads = torch.einsum('hnm,mhd->nhd', logits.softmax(-1), v).reshape(len(h), -1)
        tokens = tokens + attn.proj(heads)
        # Bipartite soft matching on the mean keys: A = even, B = odd positions.
        keys = F.normalize(k.mean(1), dim=-1)
        a, b = list(range(0, len(tokens), 2)), list(range(1, len(tokens), 2))
        sim = keys[a] @ keys[b].T
        best = {
            i: (float(sim[j].max()), b[int(sim[j].argmax())])
            for j, i in enumerate(a) if i != 0
        }  # the class token (A, 0) never merges
        merged = sorted(best, key=lambda i: -best[i][0])[:r]  # at most len(best) of them
        total = {j: tokens[j] * size[j] for j in b}
        weight = {j: size[j].clone() for j in b}
        for i in merged:
            total[best[i][1]] = total[best[i][1]] + tokens[i] * size[i]
            weight[best[i][1]] = weight[best[i][1]] + size[i]
        kept = [i for i in a if i not in merged]
        tokens = torch.stack([tokens[i] for i in kept] + [total[j] / weight[j] for j in b])
        size = torch.stack([size[i] for i in kept] + [weight[j] for j in b])
        tokens = tokens + block.mlp(block.norm2(tokens)) + block.adapter(tokens)
    return model.norm(tokens), size


@pytest.mark.parametrize('r, size, prop_attn', [(3, 32, True), ([8, 3, 5], 32, True),
                                                (5, ODD_GRID, True), (4, ODD_GRID, False)])
def test_fast_path_equals_a_plain_torch_reference(r, size, prop_attn):
    """Peaked attention, even (16) and odd (15) patch counts, the cap met on odd
    counts ([8, 3, 5]: 16 -> 8 -> 5 -> 2 of 5 // 2), with and without proportional
    attention."""
    model = randomise(tiny(AdapterViT, token_reduction=dict(type='ToMe', r=r, prop_attn=prop_attn)))
    x = images(3, size=size)
    schedule = [r] * 3 if isinstance(r, int) else r
    with torch.no_grad():
        out, = model(x)
        expected = torch.stack([reference_tome(model, im, schedule, prop_attn)[0][0] for im in x])
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    # and merging changes the result: the reference is not that of the dense model
    model.token_reduction = None
    with torch.no_grad():
        dense, = model(x)
    assert (dense - out).abs().max() > 1e-3


@pytest.mark.parametrize('r, size', [(3, 32), (5, ODD_GRID)])
def test_average_pooling_weights_tokens_by_their_patches(r, size):
    """out_type='avg_featmap': sum(size * x) / sum(size) over the patch tokens, as
    ToMe's MAE pooling; the plain mean of the merged tokens is another number."""
    model = randomise(
        tiny(AdapterViT, out_type='avg_featmap', token_reduction=dict(type='ToMe', r=r)))
    x = images(3, size=size)
    with torch.no_grad():
        out, = model(x)
        expected, plain = [], []
        for image in x:
            tokens, sizes = reference_tome(model, image, [r] * 3)
            assert sizes[1:].sum() == (15 if size == ODD_GRID else PATCHES)
            expected.append((tokens[1:] * sizes[1:, None]).sum(0) / sizes[1:].sum())
            plain.append(tokens[1:].mean(0))
    torch.testing.assert_close(out, torch.stack(expected), atol=1e-5, rtol=1e-5)
    assert (out - torch.stack(plain)).abs().max() > 1e-2


def test_average_pooling_of_a_last_block_merge_is_the_mean_over_the_patches():
    """Merging in the last block only, whose MLP (and adapter) add nothing, no final
    norm: merged tokens are size-weighted means of the unmerged ones, so the pooled
    output is the plain mean of the unmerged model's 16 patch tokens."""
    kwargs = dict(dispatch=None, out_type='avg_featmap')
    merged = tiny(DyTViT, token_reduction=dict(type='ToMe', r=[0, 0, 7]), **kwargs)
    plain = tiny(DyTViT, **kwargs)
    for model in (merged, plain):
        randomise(model)
        model.norm = torch.nn.Identity()
        torch.nn.init.zeros_(model.blocks[-1].mlp.fc2.weight)
        torch.nn.init.zeros_(model.blocks[-1].mlp.fc2.bias)
        torch.nn.init.zeros_(model.blocks[-1].adapter.up.weight)
    x = images(2)
    with torch.no_grad():
        out, = merged(x)
        expected, = plain(x)
        tokens = merged.last_reduction.size.shape[1]
    assert tokens == 1 + PATCHES - 7
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-6)


def test_r_zero_is_the_model_without_tome():
    x = images(2)
    plain = randomise(tiny(DyTViT))
    merged = randomise(tiny(DyTViT, token_reduction=dict(type='ToMe', r=0)))
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
    (dict(token_reduction=dict(type='ToMe', r=(8, 2))), r'ToMe r\[1\]=2 must be a finite number '
     r'in \[-1, 1\]'),
    (dict(token_reduction=dict(type='ToMe', r=(-1, 0))), r'ToMe r\[0\]=-1 must be an int >= 0'),
    (dict(token_reduction=dict(type='ToMe', r=(4, 0, 7))), r'ToMe r=\(4, 0, 7\) must be a pair '
     r'\(r, inflect\)'),
    (dict(arch=dict(TINY_ARCH, num_layers=1), token_reduction=dict(type='ToMe', r=(4, 0))),
     r'ToMe r=\(4, 0\) spreads r over the blocks: it needs >= 2 blocks'),
    (dict(dispatch='attn', token_reduction=dict(type='ToMe')), "dispatch='attn' is not allowed"),
    (dict(out_type='featmap', token_reduction=dict(type='ToMe')), "out_type='cls_token'"),
])
def test_bad_settings_name_field_and_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tiny(DyTViT, **kwargs)


@pytest.mark.parametrize('name, kind, dispatch, bottleneck', [
    ('vit-b-p16-adaptformer-tome_d64_8xb128-100e_cifar100-224px.py', 'AdapterViT', None, 64),
    ('vit-b-p16-dyt-tome_d64_8xb128-100e_cifar100-224px.py', 'DyTViT', 'mlp', 64),
    ('vit-b-p16-adaptformer-tome_d8_1xb64-100e_vtab1k-224px.py', 'AdapterViT', None, 8),
    ('vit-b-p16-dyt-tome_d8_1xb64-100e_vtab1k-224px.py', 'DyTViT', 'mlp', 8),
])
def test_configs_train_their_classifier_with_tome(name, kind, dispatch, bottleneck):
    """The configs' settings, and their classifier (complete pass and distillation of
    DyT included) computing finite losses on the tiny ViT."""
    cfg = copy.deepcopy(dyt_config(name))
    backbone = cfg.model.backbone
    assert (backbone.type, backbone.get('dispatch'),
            backbone.adapter_cfg.bottleneck) == (kind, dispatch, bottleneck)
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


@pytest.mark.parametrize('extra', [1, 2, 3, 6])
@pytest.mark.parametrize('patches', [16, 15])
def test_extra_tokens_stay_in_front_in_their_order(extra, patches):
    """Class, distillation and register tokens are never merged and keep their positions
    (a distillation token is read at position 1 after the blocks), with even and odd
    counts of tokens on either side."""
    torch.manual_seed(0)
    x = torch.randn(2, extra + patches, 8)
    merge = bipartite_soft_matching(
        torch.randn(2, extra + patches, 4), r=5, num_prefix_tokens=extra)
    out = merge(x)
    assert out.shape == (2, extra + patches - 5, 8)
    torch.testing.assert_close(out[:, :extra], x[:, :extra], rtol=0, atol=0)
