import pytest
import torch

from helpers.dyt import dyt_param_names, spread_gates, trainable_names
from helpers.models import TINY_ARCH, images, tiny
from mmvitdyn.checkpoint import is_dyt_param
from mmvitdyn.models import DyTViT, MoEAdapter, TokenDispatcher, ViT

VARIANTS = ['mlp', 'attn', 'attn_mlp', 'layer']


def build(model_cls=DyTViT, **kwargs):
    """A tiny ``model_cls`` that returns every token."""
    return tiny(model_cls, out_type='raw', **kwargs)


@pytest.mark.parametrize('dispatch', VARIANTS)
def test_at_init_with_every_token_active_equals_plain_vit(dispatch):
    vit = build(ViT).eval()
    dyt = build(dispatch=dispatch).eval()
    dyt.load_state_dict(vit.state_dict(), strict=False)
    spread_gates(dyt, std=0.0, bias=10.0)  # every token active
    x = images()
    expected = vit(x)[0]
    torch.testing.assert_close(dyt(x)[0], expected)
    assert dyt.activation_rates()['act_rate'] == 1.0
    with dyt.complete_mode():
        torch.testing.assert_close(dyt(x)[0], expected)
    assert dyt.activation_rates() == {}  # no dispatcher ran


@pytest.mark.parametrize('dispatch', VARIANTS)
@pytest.mark.parametrize('batch', [1, 5])
def test_packed_equals_masked_in_eval(dispatch, batch):
    model = build(dispatch=dispatch).eval()
    spread_gates(model)
    x = images(batch)
    model.set_packed(True)
    packed = model(x)[0]
    masks = model.dispatch_masks()
    model.set_packed(False)
    masked = model(x)[0]
    torch.testing.assert_close(packed, masked, atol=1e-5, rtol=1e-5)
    rates = torch.stack([m.float().mean(1) for layer in masks for m in layer.values()])
    assert 0.05 < rates.mean() < 0.95
    if batch > 1:  # activation really varies per image
        assert (rates.max(1).values - rates.min(1).values).max() > 0.1


def skipped_block_output(block, x: torch.Tensor, dispatch: str) -> torch.Tensor:
    """A DyT block's output for patch tokens that every dispatcher skips: the gated
    parts leave the residual alone, the adapter still adds to it (class token at 0)."""
    if dispatch == 'mlp':  # attention over all tokens, MLP skipped
        h = x + block.attn(block.norm1(x))
        return h + block.adapter(h)
    if dispatch == 'attn':  # attention skipped, MLP run
        return x + block.mlp(block.norm2(x)) + block.adapter(x)
    return x + block.adapter(x)  # 'layer', 'attn_mlp': both parts skipped


@pytest.mark.parametrize('dispatch', VARIANTS)
def test_skipped_tokens_keep_residual_plus_adapter(dispatch):
    """With every patch token inactive, each block gives them residual + adapter."""
    model = build(dispatch=dispatch).eval()
    torch.manual_seed(2)
    for block in model.dyt_blocks():  # non-zero adapters (they start as the zero function)
        torch.nn.init.normal_(block.adapter.up.weight, std=0.5)
    spread_gates(model, std=0.0, bias=-10.0)
    assert model.activation_rates() == {}  # nothing has run yet
    seen = []
    hooks = [
        block.register_forward_hook(lambda _, args, out: seen.append((args[0], out)))
        for block in model.blocks
    ]
    with torch.no_grad():
        model(images(2))
    for hook in hooks:
        hook.remove()
    assert model.activation_rates()['act_rate'] == 0.0
    assert len(seen) == TINY_ARCH['num_layers']
    for block, (x, out) in zip(model.blocks, seen):
        expected = skipped_block_output(block, x, dispatch)[:, 1:]
        torch.testing.assert_close(out[:, 1:], expected)
        assert block.adapter(x).abs().max() > 1e-2  # the adapter does add something


@pytest.mark.parametrize('dispatch', VARIANTS)
def test_training_masks_are_binary_and_gradients_flow_straight_through(dispatch):
    model = build(dispatch=dispatch).train()
    model.attach_objective('this test, which adds its own loss terms')
    spread_gates(model, std=0.1)
    out = model(images())[0]
    for layer in model.dispatch_masks():
        for mask in layer.values():
            assert set(mask.detach().unique().tolist()) <= {0.0, 1.0}
    (out.square().mean() + model.rate_loss()).backward()
    for name, param in model.named_parameters():
        if '.dispatchers.' in name and name.endswith('weight'):
            assert param.grad is not None and param.grad.abs().sum() > 0, name
        if not param.requires_grad:
            assert param.grad is None, name


@pytest.mark.parametrize('dispatch,parts', [('mlp', ('mlp', )), ('attn', ('attn', )),
                                            ('attn_mlp', ('attn', 'mlp')), ('layer', ('layer', ))])
def test_exactly_the_adapters_and_dispatchers_train(dispatch, parts):
    model = build(dispatch=dispatch)
    expected = dyt_param_names(TINY_ARCH['num_layers'], parts)
    assert trainable_names(model) == expected
    assert len(expected) == TINY_ARCH['num_layers'] * 2 * (2 + len(parts))
    # The single definition the loader and the converters use classifies the same set.
    assert {name for name in model.state_dict() if is_dyt_param(name)} == expected


def test_trainable_sets_of_the_tuning_modes():
    layers = TINY_ARCH['num_layers']
    dyt = build(unfreeze=['norm', 'blocks.2.mlp.fc2'])
    assert trainable_names(dyt) == dyt_param_names(layers) | {
        'norm.weight', 'norm.bias', 'blocks.2.mlp.fc2.weight', 'blocks.2.mlp.fc2.bias'
    }
    adaptformer = build(dispatch=None)
    assert trainable_names(adaptformer) == dyt_param_names(layers, dispatched=())
    full = build(dispatch=None, adapter_cfg=None, freeze_pretrained=False)
    assert trainable_names(full) == {n for n, _ in full.named_parameters()}
    assert trainable_names(full) == trainable_names(build(ViT))


def test_rate_loss_moves_activation_toward_target():
    model = build(target_rate=0.2).train()
    model.attach_objective('this test, which adds its own loss terms')
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=0.05)
    x = images(8)
    model(x)
    start = model.activation_rates()['act_rate']
    for _ in range(30):
        model(x)
        optimizer.zero_grad()
        model.rate_loss().backward()
        optimizer.step()
    model.eval()(x)
    end = model.activation_rates()['act_rate']
    assert start > 0.35 and end < 0.3, (start, end)


def test_dispatcher_modes():
    dispatcher = TokenDispatcher(8, tau=5.0, gumbel=False)
    x = torch.randn(2, 6, 8, requires_grad=True)
    logits = dispatcher.gate(x[:, 1:]).squeeze(-1)
    dispatcher.eval()
    torch.testing.assert_close(dispatcher(x)[:, 1:], (logits >= 0).float())
    assert dispatcher(x)[:, 0].eq(1).all()
    dispatcher.train()
    mask = dispatcher(x)
    torch.testing.assert_close(mask[:, 1:], (logits > 0).float())  # no noise: same threshold
    mask[:, 1:].sum().backward()
    soft = torch.sigmoid(logits / 5.0)
    expected = ((soft * (1 - soft) / 5.0).unsqueeze(-1) * x[:, 1:]).sum((0, 1))
    torch.testing.assert_close(dispatcher.gate.weight.grad[0], expected)


def test_gumbel_noise_flips_some_decisions():
    dispatcher = TokenDispatcher(8).train()
    torch.nn.init.constant_(dispatcher.gate.bias, 0.5)
    torch.nn.init.zeros_(dispatcher.gate.weight)
    rate = dispatcher(torch.randn(64, 101, 8))[:, 1:].mean()
    # P(logit + Logistic noise > 0) = sigmoid(0.5) = 0.62. Over seeds 0-9 the rate of
    # these 6400 tokens ranged 0.610-0.632 (std 0.006, the binomial 0.006): 0.02 is 3 std.
    assert abs(float(rate) - 0.622) < 0.02


def test_moe_adapter_routes_per_image_and_mixes_experts():
    torch.manual_seed(0)
    adapter = MoEAdapter(16, 4, num_experts=3, dropout=0.0).eval()
    for p in adapter.parameters():
        torch.nn.init.normal_(p, std=0.5)
    x = torch.randn(4, 10, 16)
    weights = adapter.routing_weights(x)
    assert torch.allclose(weights.sum(-1), torch.ones(4))
    assert (weights.max(0).values - weights.min(0).values).max() > 0.05
    expected = []
    for b in range(4):
        a = weights[b]
        down = sum(a[e] * adapter.down_weight[e] for e in range(3))
        up = sum(a[e] * adapter.up_weight[e] for e in range(3))
        hidden = torch.relu(x[b] @ down + a @ adapter.down_bias)
        expected.append((hidden @ up + a @ adapter.up_bias) * adapter.scale)
    torch.testing.assert_close(adapter(x), torch.stack(expected), atol=1e-5, rtol=1e-5)


def test_adapters_start_as_zero_after_init_weights():
    model = build(adapter_cfg=dict(bottleneck=8, num_experts=2))
    for block in model.dyt_blocks():
        assert block.adapter.up_weight.abs().sum() == 0
        assert block.adapter(torch.randn(2, 17, 32)).abs().max() == 0


@pytest.mark.parametrize('kwargs,field', [
    (dict(dispatch='token'), 'dispatch'),
    (dict(target_rate=0.0), 'target_rate'),
    (dict(target_rate=1.5), 'target_rate'),
    (dict(adapter_cfg=dict(bottleneck=-4)), 'adapter_cfg.bottleneck'),
    (dict(adapter_cfg=dict(bottleneck=8, num_experts=0)), 'adapter_cfg.num_experts'),
    (dict(adapter_cfg=dict(bottleneck=8, width=3)), 'adapter_cfg'),
    (dict(unfreeze=['head']), 'unfreeze'),
    (dict(dispatcher_cfg=dict(tau=0)), 'tau'),
])
def test_bad_config_values_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        build(**kwargs)


# Values that were taken as something else (True as 1), gave NaN outputs, or
# failed with a bare TypeError: each now names the field and what is allowed.
@pytest.mark.parametrize('kwargs,message', [
    (dict(target_rate=True), r'target_rate=True must be a finite number in \(0, 1\]'),
    (dict(target_rate='0.5'), r"target_rate='0.5' must be a finite number in \(0, 1\]"),
    (dict(keep_layers=True), r'keep_layers=True must be an int >= 0'),
    (dict(adapter_cfg=dict(bottleneck=True)), r'adapter_cfg.bottleneck=True must be an int >= 1'),
    (dict(adapter_cfg=dict(bottleneck=8, num_experts=2.5)),
     r'adapter_cfg.num_experts=2.5 must be an int >= 1'),
    (dict(adapter_cfg=dict(bottleneck=8, num_experts='4')),
     r"adapter_cfg.num_experts='4' must be an int >= 1"),
    (dict(adapter_cfg=dict(bottleneck=8, scale=float('nan'))),
     r"adapter_cfg.scale=nan must be a finite number or 'learnable'"),
    (dict(adapter_cfg=dict(bottleneck=8, scale=float('inf'))),
     r"adapter_cfg.scale=inf must be a finite number or 'learnable'"),
    (dict(dispatcher_cfg=dict(tau=float('nan'))), r'dispatcher_cfg.tau=nan must be a finite '
     r'number > 0'),
    (dict(token_reduction=dict(type='ToMe', r=2.5)), r'ToMe r=2.5 must be an int >= 0'),
    (dict(token_reduction=dict(type='ToMe', r=[1, 2.5, 0])), r'ToMe r\[1\]=2.5 must be an int'),
    (dict(unfreeze='blocks'), r"unfreeze='blocks' must be a list of parameter names"),
])
def test_values_of_the_wrong_kind_are_refused_with_the_field(kwargs, message):
    if 'token_reduction' in kwargs:
        kwargs.update(out_type='cls_token')
    with pytest.raises(ValueError, match=message):
        tiny(DyTViT, **kwargs)


def test_tome_says_once_when_blocks_merge_fewer_tokens_than_r(log):
    """16 patch tokens, r=5 in each of the 3 blocks: 5 of 16, 5 of 11, then 3 of 6."""
    model = tiny(DyTViT, out_type='cls_token', token_reduction=dict(type='ToMe', r=5))
    warnings = [r.getMessage() for r in log if r.levelname == 'WARNING']
    assert len(warnings) == 1 and warnings[0].endswith('the blocks merge [5, 5, 3]')
    model(images(2))  # the stated schedule is the one that runs: 1 + 16 tokens, then
    assert model.last_reduction.token_counts == [12, 7, 4]
    tiny(DyTViT, out_type='cls_token', token_reduction=dict(type='ToMe', r=[5, 5, 3]))
    assert len([r for r in log if r.levelname == 'WARNING']) == 1  # nothing clipped: silent
