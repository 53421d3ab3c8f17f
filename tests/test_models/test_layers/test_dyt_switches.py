"""The official DyT code's optional switches: adapter LayerNorm and learnable
scale, dispatch from block ``keep_layers`` on, the minimum-activation hinge."""
import pytest
import torch
import torch.nn.functional as F
from mmengine.registry import DefaultScope
from mmpretrain.registry import MODELS

from helpers.dyt import spread_gates, trainable_names
from helpers.models import IMG_SIZE, PATCH_SIZE, TINY_ARCH, images, tiny, tiny_backbone_cfg
from mmvitdyn.analysis.dyt_flops import DyTFlopCounter
from mmvitdyn.models import Adapter, DyTViT, MoEAdapter

C, MLP, DEPTH = (TINY_ARCH[k] for k in ('embed_dims', 'feedforward_channels', 'num_layers'))
PATCHES = (IMG_SIZE // PATCH_SIZE)**2


def randomize(module, seed=0):
    """Every parameter of ``module`` drawn afresh (LayerNorm and scale included)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in module.parameters():
            param.copy_(0.5 * torch.randn(param.shape, generator=gen) + 0.5)
    return module


@pytest.mark.parametrize('layer_norm', [None, 'in', 'out'])
@pytest.mark.parametrize('scale', [0.3, 'learnable'])
def test_adapter_equals_plain_torch(layer_norm, scale):
    adapter = randomize(Adapter(C, 4, scale=scale, dropout=0.0, layer_norm=layer_norm))
    x = torch.randn(2, 5, C, generator=torch.Generator().manual_seed(1))
    s = adapter.scale.item() if scale == 'learnable' else scale
    if scale == 'learnable':
        assert [n for n, _ in adapter.named_parameters()].count('scale') == 1
        assert s != 1.0  # randomised: a scale left out of the computation would show
    norm = (adapter.norm.weight, adapter.norm.bias) if layer_norm else None
    h = F.layer_norm(x, (C, ), *norm, eps=1e-5) if layer_norm == 'in' else x
    expected = F.relu(h @ adapter.down.weight.T + adapter.down.bias) @ adapter.up.weight.T
    expected = (expected + adapter.up.bias) * s
    if layer_norm == 'out':  # the official code normalises the scaled output
        expected = F.layer_norm(expected, (C, ), *norm, eps=1e-5)
    torch.testing.assert_close(adapter(x), expected)


@pytest.mark.parametrize('layer_norm', ['in', 'out'])
def test_moe_adapter_layer_norm_wraps_the_same_experts(layer_norm):
    plain = randomize(MoEAdapter(C, 4, num_experts=3, scale=0.5, dropout=0.0))
    normed = MoEAdapter(C, 4, num_experts=3, scale='learnable', dropout=0.0, layer_norm=layer_norm)
    normed.load_state_dict(plain.state_dict(), strict=False)
    with torch.no_grad():
        normed.scale.fill_(0.5)
        normed.norm.weight.normal_(1.0, 0.3)
    x = torch.randn(2, 5, C, generator=torch.Generator().manual_seed(1))
    ln = (normed.norm.weight, normed.norm.bias)
    if layer_norm == 'in':
        expected = plain(F.layer_norm(x, (C, ), *ln, eps=1e-5))
    else:
        expected = F.layer_norm(plain(x), (C, ), *ln, eps=1e-5)
    torch.testing.assert_close(normed(x), expected)


def test_learnable_scale_and_norm_start_as_official_and_train():
    model = tiny(DyTViT, adapter_cfg=dict(bottleneck=4, scale='learnable', layer_norm='in'))
    model.attach_objective('this test, which adds its own loss terms')
    for block in model.blocks:
        assert block.adapter.scale.shape == (1, ) and block.adapter.scale.item() == 1.0
        assert torch.equal(block.adapter.norm.weight, torch.ones(C))
        assert not block.adapter.norm.bias.any()
    assert {
        f'blocks.{i}.adapter.{p}'
        for i in range(DEPTH)
        for p in ('scale', 'norm.weight', 'norm.bias')
    } <= trainable_names(model)
    with torch.no_grad():
        for block in model.blocks:
            block.adapter.up.weight.normal_(std=0.5)
    model.train()(images(2))[0].square().sum().backward()
    assert all(block.adapter.scale.grad.abs().item() > 0 for block in model.blocks)


def test_keep_layers_blocks_run_every_token():
    model = tiny(DyTViT, out_type='raw', keep_layers=2)
    assert [sorted(b.dispatchers) for b in model.blocks] == [[], [], ['mlp']]
    gates = {n for n in trainable_names(model) if 'dispatchers' in n}
    assert gates == {'blocks.2.dispatchers.mlp.gate.weight', 'blocks.2.dispatchers.mlp.gate.bias'}
    spread_gates(model)
    for block in model.blocks:
        torch.nn.init.normal_(block.adapter.up.weight, std=0.5)
    # Reference: every block dispatches, blocks 0 and 1 with gates that pass every token.
    reference = tiny(DyTViT, out_type='raw')
    reference.load_state_dict(model.state_dict(), strict=False)
    for block in reference.blocks[:2]:
        torch.nn.init.zeros_(block.dispatchers.mlp.gate.weight)
        torch.nn.init.constant_(block.dispatchers.mlp.gate.bias, 10.0)
    x = images(3)
    torch.testing.assert_close(model(x)[0], reference(x)[0])
    assert 0 < model.activation_rates()['act_rate'] < 1
    assert set(model.activation_rates()) == {'act_rate', 'act_rate/2.mlp'}


def test_keep_layers_rate_loss_counts_dispatched_blocks_only():
    model = tiny(DyTViT, keep_layers=1, target_rate=0.3).train()
    model.attach_objective('this test, which adds its own loss terms')
    spread_gates(model)
    torch.manual_seed(4)
    model(images(4))
    masks = [model.blocks[i].masks['mlp'][:, 1:] for i in (1, 2)]
    assert not model.blocks[0].masks
    mean = (masks[0].sum() + masks[1].sum()) / (2 * 4 * PATCHES)
    torch.testing.assert_close(model.rate_loss(), (mean - 0.3)**2)


def test_flop_counter_prices_dispatched_blocks_only():
    model = tiny(DyTViT, adapter_cfg=dict(bottleneck=4), keep_layers=1)
    spread_gates(model)
    counter = DyTFlopCounter(model, images(1))
    model(images(4))
    masks = model.dispatch_masks()
    # A skipped token saves norm2 (5 per element, mmengine's LayerNorm count)
    # and fc1 + fc2 (one per multiply-add).
    per_token = 5 * C + 2 * C * MLP
    inactive = sum(PATCHES - masks[i]['mlp'].sum(1) for i in (1, 2))
    assert inactive.min() > 0
    torch.testing.assert_close(counter.from_last_forward(),
                               (counter.static_flops - per_token * inactive).double())
    # Block 0 has no gate Linear(C, 1) to run on its 1 + PATCHES tokens.
    everywhere = DyTFlopCounter(tiny(DyTViT, adapter_cfg=dict(bottleneck=4)), images(1))
    assert everywhere.static_flops - counter.static_flops == (1 + PATCHES) * C


def build_classifier(**kwargs):
    cfg = dict(
        type='DyTImageClassifier',
        data_preprocessor=dict(type='ClsDataPreprocessor', mean=[127.5] * 3, std=[64.] * 3),
        backbone=tiny_backbone_cfg(
            'DyTViT', keep_layers=1, adapter_cfg=dict(bottleneck=4, scale=1.0, dropout=0.0)),
        head=dict(type='LinearClsHead', num_classes=3, in_channels=C),
        **kwargs)
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg)
    model.init_weights()
    return model


def set_masks(model, active):
    """Block i + 1 gets an MLP mask whose image b has ``active[i][b]`` active patch
    tokens, at positions drawn at random (the class token is always active)."""
    gen = torch.Generator().manual_seed(0)
    for block, counts in zip(model.backbone.blocks[1:], active):
        mask = torch.zeros(len(counts), 1 + PATCHES)
        mask[:, 0] = 1.
        for image, count in enumerate(counts):
            mask[image, 1 + torch.randperm(PATCHES, generator=gen)[:count]] = 1.
        block.masks = {'mlp': mask}


@pytest.mark.parametrize(
    'per,hinge',
    [
        # Rates per image, blocks 1 and 2, against 0.5:
        # max(0, .5 - 2/16) + max(0, .5 - 10/16) + max(0, .5 - 13/16) + max(0, .5 - 5/16).
        ('image_layer', 0.375 + 0 + 0 + 0.1875),
        # Rates per block over both images: max(0, .5 - 12/32) + max(0, .5 - 18/32).
        ('layer', 0.125 + 0),
        # Every inactive patch token counts 0.5: (14 + 6) in block 1, (3 + 11) in block 2.
        ('token', 0.5 * (14 + 6 + 3 + 11)),
    ])
def test_minimum_activation_hinge_by_hand(per, hinge):
    model = build_classifier(
        rate_loss_weight=2.0, token_minimal=0.5, token_minimal_weight=0.5, token_minimal_per=per)
    set_masks(model, ((2, 10), (13, 5)))  # active patch tokens of images 0 and 1
    terms = model.rate_terms()
    assert terms['loss_rate_min'].item() == pytest.approx(2.0 * 0.5 * hinge)
    mean = (2 + 10 + 13 + 5) / (4 * PATCHES)  # over the dispatched blocks 1 and 2 only
    assert terms['loss_rate'].item() == pytest.approx(2.0 * (mean - 0.5)**2)
    assert set(terms) == {
        'loss_rate', 'loss_rate_min', 'act_rate', 'act_rate/1.mlp', 'act_rate/2.mlp'
    }


@pytest.mark.parametrize(
    'per,hinge',
    [
        # Image 0 keeps none of its 16 tokens in block 2: max(0, 0.1 - 0).
        ('image_layer', 0.1),
        # Block 2's rate over the batch is 16/32 = 0.5 >= 0.1.
        ('layer', 0.0),
        # Each of image 0's 16 skipped tokens counts 0.1.
        ('token', 16 * 0.1),
    ])
def test_minimum_activation_hinge_of_an_image_that_skips_a_layer(per, hinge):
    """Two images, one with no active token in a layer, one with all active."""
    model = build_classifier(token_minimal=0.1, token_minimal_weight=1.0, token_minimal_per=per)
    set_masks(model, ((PATCHES, PATCHES), (0, PATCHES)))
    assert model.min_rate_loss().item() == pytest.approx(hinge)
    assert model.rate_terms()['loss_rate_min'].item() == pytest.approx(2.0 * hinge)


def test_the_hinge_is_per_image_and_layer_by_default():
    assert build_classifier().token_minimal_per == 'image_layer'


def test_minimum_activation_hinge_off_by_default_and_raises_low_rates():
    model = build_classifier()
    set_masks(model, ((0, 0), (0, 0)))
    assert 'loss_rate_min' not in model.rate_terms()
    model = build_classifier(token_minimal=0.9, token_minimal_weight=1.0)
    backbone = model.backbone.train()
    spread_gates(backbone)
    torch.manual_seed(4)
    backbone(images(2))
    model.rate_terms()['loss_rate_min'].backward()
    gates = [b.dispatchers.mlp.gate.bias.grad for b in backbone.blocks[1:]]
    assert all(g.item() < 0 for g in gates)  # descent raises every layer's activation


@pytest.mark.parametrize('kwargs,field', [
    (dict(keep_layers=-1), 'keep_layers'),
    (dict(keep_layers=1.5), 'keep_layers'),
    (dict(keep_layers=DEPTH), r'keep_layers=3 must be < the 3 blocks \(allowed: 0..2\)'),
    (dict(keep_layers=1, dispatch=None), 'keep_layers=1 chooses the blocks that dispatch'),
    (dict(adapter_cfg=dict(bottleneck=4, scale='learnable_scalar')),
     "adapter_cfg.scale='learnable_scalar' must be a finite number or 'learnable'"),
    (dict(adapter_cfg=dict(bottleneck=4, layer_norm='before')),
     r"adapter_cfg.layer_norm='before' is not one of \(None, 'in', 'out'\)"),
])
def test_bad_backbone_switches_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        tiny(DyTViT, **kwargs)


@pytest.mark.parametrize('kwargs,message', [
    (dict(token_minimal=1.5), r'token_minimal=1.5 must be a finite number in \[0, 1\]'),
    (dict(token_minimal_weight=-1.0), 'token_minimal_weight=-1.0 must be a finite number >= 0'),
    (dict(rate_loss_weight=-2.0), 'rate_loss_weight=-2.0 must be a finite number >= 0'),
    (dict(token_minimal_per='image'),
     r"token_minimal_per='image' is not one of \('image_layer', 'layer', 'token'\)"),
])
def test_bad_hinge_settings_name_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        build_classifier(**kwargs)
