"""AdaMix: a random down/up expert pair per training forward (one up-projection
shared by default), their average at inference."""
import copy
import itertools

import pytest
import torch
import torch.nn.functional as F
from mmengine.registry import DefaultScope
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from helpers.configs import dyt_config
from helpers.dyt import spread_gates, trainable_names
from helpers.models import TINY_ARCH, images, shrink_to_tiny, tiny
from mmvitdyn.analysis import DyTFlopCounter
from mmvitdyn.models import AdaMixAdapter, DyTViT

C, D, E = 16, 4, 3


def adamix(scale=0.5, share_up=False):
    """An AdaMix adapter whose experts all differ (they start equal); E
    up-projections unless ``share_up``."""
    adapter = AdaMixAdapter(C, D, num_experts=E, scale=scale, dropout=0.0, share_up=share_up)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for param in adapter.parameters():
            param.copy_(torch.randn(param.shape, generator=gen))
    return adapter


def tokens(seed=1):
    return torch.randn(4, 7, C, generator=torch.Generator().manual_seed(seed))


def expert_pair_output(adapter, x, down, up):
    """``scale * up_j(relu(down_i(x)))`` of down-projection i and up-projection j."""
    hidden = F.relu(x @ adapter.down_weight[down] + adapter.down_bias[down])
    return (hidden @ adapter.up_weight[up] + adapter.up_bias[up]) * adapter.scale


def drawn_pairs(adapter, x, draws, seed):
    """The (down, up) pair behind each of ``draws`` training forwards, found by
    matching the output of the whole batch with each of the E x E pairs."""
    torch.manual_seed(seed)
    adapter.train()
    pairs = []
    with torch.no_grad():
        candidates = {
            pair: expert_pair_output(adapter, x, *pair)
            for pair in itertools.product(range(E), repeat=2)
        }
        for _ in range(draws):
            out = adapter(x)
            matches = [p for p, c in candidates.items() if torch.allclose(out, c, atol=1e-5)]
            assert len(matches) == 1, matches  # one pair, shared by all 4 images
            pairs.append(matches[0])
    return pairs


def test_a_training_batch_shares_one_random_pair_and_every_expert_is_drawn():
    adapter, x = adamix(), tokens()
    pairs = drawn_pairs(adapter, x, draws=30, seed=3)
    assert {down for down, _ in pairs} == set(range(E)) == {up for _, up in pairs}
    assert any(down != up for down, up in pairs)  # drawn independently
    assert drawn_pairs(adapter, x, draws=30, seed=3) == pairs  # torch's RNG: a seed repeats it
    assert drawn_pairs(adapter, x, draws=8, seed=4) != pairs[:8]


def test_inference_is_the_adapter_with_averaged_weights():
    adapter, x = adamix(), tokens()
    mean = [
        p.mean(0)
        for p in (adapter.down_weight, adapter.down_bias, adapter.up_weight, adapter.up_bias)
    ]
    expected = (F.relu(x @ mean[0] + mean[1]) @ mean[2] + mean[3]) * 0.5
    with torch.no_grad():
        out = adapter.eval()(x)
        torch.testing.assert_close(out, expected)
        average_of_outputs = sum(expert_pair_output(adapter, x, e, e) for e in range(E)) / E
    assert (out - average_of_outputs).abs().max() > 0.1  # merging weights, not outputs


@pytest.mark.parametrize('share_up', [True, False])
def test_experts_start_equal_and_the_adapter_starts_as_zero(share_up):
    torch.manual_seed(0)
    adapter = AdaMixAdapter(C, D, num_experts=E, share_up=share_up)
    for param in (adapter.down_weight, adapter.down_bias, adapter.up_weight, adapter.up_bias):
        assert all(torch.equal(param[e], param[0]) for e in range(len(param)))
    assert adapter.down_weight.abs().max() > 0 and adapter.up_weight.abs().max() == 0
    assert adapter.eval()(tokens()).abs().max() == 0


def test_gradients_reach_the_drawn_pair_only():
    adapter, x = adamix(), tokens()
    torch.manual_seed(5)
    adapter.train()(x).square().sum().backward()
    torch.manual_seed(5)
    down, up = int(torch.randint(E, ())), int(torch.randint(E, ()))  # the pair the forward drew
    for name, expert in (('down_weight', down), ('down_bias', down), ('up_weight', up), ('up_bias',
                                                                                         up)):
        grad = getattr(adapter, name).grad
        assert [bool(grad[e].abs().sum() > 0) for e in range(E)] == [e == expert
                                                                     for e in range(E)], name


def test_the_up_projection_is_shared_by_default():
    adapter = AdaMixAdapter(C, D, num_experts=E)
    assert adapter.share_up
    assert adapter.down_weight.shape == (E, C, D) and adapter.down_bias.shape == (E, D)
    assert adapter.up_weight.shape == (1, D, C) and adapter.up_bias.shape == (1, C)


def test_every_drawn_expert_trains_the_one_shared_up_projection():
    """Whichever down-projection a forward draws, the output is
    ``scale * (relu(x W_i + b_i) U + c)`` with the one (U, c), and U, c get
    that expression's gradients (plain torch on leaf copies)."""
    adapter, x = adamix(share_up=True), tokens()
    adapter.train()
    torch.manual_seed(6)
    drawn = set()
    for _ in range(20):
        adapter.zero_grad()
        out = adapter(x)
        out.square().sum().backward()
        down_grads = adapter.down_weight.grad.flatten(1).abs().sum(1)
        (down, ) = down_grads.nonzero().flatten().tolist()  # the one down-projection drawn
        drawn.add(down)
        up_w, up_b = (
            p.detach()[0].clone().requires_grad_() for p in (adapter.up_weight, adapter.up_bias))
        hidden = F.relu(x @ adapter.down_weight[down].detach() + adapter.down_bias[down].detach())
        expected = (hidden @ up_w + up_b) * adapter.scale
        expected.square().sum().backward()
        torch.testing.assert_close(out, expected)
        torch.testing.assert_close(adapter.up_weight.grad[0], up_w.grad)
        torch.testing.assert_close(adapter.up_bias.grad[0], up_b.grad)
        assert up_w.grad.abs().sum() > 0
    assert drawn == set(range(E))


def test_adamw_moves_undrawn_experts_as_adamix_runs_do():
    """An expert is a slice of a stacked parameter: a step that does not draw it
    gives it a zero gradient, which AdamW decays and moves by its moments. The
    reference is AdaMix's layout written in plain torch: separate Linear experts
    whose gradients are zeroed, not set to None, between steps (torch 1.9's
    ``zero_grad``), so an expert drawn once is updated by every later step
    there too; an expert not yet drawn has grad None and stays put there,
    while ours is decayed (which is why expert 1 and the up-projection, drawn
    with it, are not compared)."""
    adapter, x = adamix(share_up=True), tokens()
    adapter.train()
    lr, wd, draws = 0.01, 0.1, [(0, 0), (1, 0), (1, 0)]
    downs = [torch.nn.Linear(C, D) for _ in range(E)]
    up = torch.nn.Linear(D, C)
    with torch.no_grad():
        for e, linear in enumerate(downs):
            linear.weight.copy_(adapter.down_weight[e].T)
            linear.bias.copy_(adapter.down_bias[e])
        up.weight.copy_(adapter.up_weight[0].T)
        up.bias.copy_(adapter.up_bias[0])
    initial = adapter.down_weight.detach().clone()
    reference = [p for m in downs + [up] for p in m.parameters()]
    ref_opt = torch.optim.AdamW(reference, lr=lr, weight_decay=wd)
    opt = torch.optim.AdamW(adapter.parameters(), lr=lr, weight_decay=wd)
    adapter.choose_experts = iter(draws).__next__  # the draws, fixed
    after = []
    for down, _ in draws:
        (up(F.relu(downs[down](x))) * adapter.scale).square().sum().backward()
        ref_opt.step()
        ref_opt.zero_grad(set_to_none=False)
        adapter(x).square().sum().backward()
        opt.step()
        opt.zero_grad()
        after.append(adapter.down_weight.detach().clone())
    # Expert 0, drawn in step 1 only, moves in steps 2 and 3 as AdaMix's does.
    torch.testing.assert_close(adapter.down_weight[0].detach(), downs[0].weight.detach().T)
    assert not torch.equal(after[2][0], after[1][0])
    # Expert 2 was never drawn: zero moments, so only the decay, (1 - lr wd) a step.
    torch.testing.assert_close(after[2][2], initial[2] * (1 - lr * wd)**3)
    assert torch.equal(downs[2].weight.detach().T, initial[2])


ADAMIX = dict(bottleneck=4, scale=1.0, dropout=0.0, num_experts=E, mixing='adamix')


def adamix_model():
    model = tiny(DyTViT, adapter_cfg=ADAMIX, out_type='raw')
    gen = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for block in model.dyt_blocks():
            for name in ('down_weight', 'up_weight', 'up_bias'):
                getattr(block.adapter, name).normal_(std=0.3, generator=gen)
    spread_gates(model)
    return model


def test_dyt_trains_exactly_the_experts_and_the_gates():
    """The trainable set, written out: per block the four stacked expert tensors and
    the MLP gate; no router (AdaMix has none)."""
    expected = {
        f'blocks.{i}.{name}'
        for i in range(TINY_ARCH['num_layers'])
        for name in ('adapter.down_weight', 'adapter.down_bias', 'adapter.up_weight',
                     'adapter.up_bias', 'dispatchers.mlp.gate.weight', 'dispatchers.mlp.gate.bias')
    }
    assert trainable_names(adamix_model()) == expected


def test_state_dict_round_trip():
    """A fresh model loading the state dict computes the same in evaluation (the
    averaged adapters) and, under the same seed, in training (the same draws)."""
    model, x = adamix_model(), images(2)
    fresh = tiny(DyTViT, seed=5, adapter_cfg=ADAMIX, out_type='raw')
    assert not torch.equal(fresh(x)[0], model(x)[0])
    fresh.load_state_dict(model.state_dict())
    torch.testing.assert_close(fresh(x)[0], model(x)[0], rtol=0, atol=0)
    outs = []
    for m in (model, fresh):
        m.train().attach_objective('this test, which has no loss')
        torch.manual_seed(7)
        outs.append(m(x)[0])
    torch.testing.assert_close(outs[0], outs[1], rtol=0, atol=0)


def test_flops_are_those_of_one_adapter():
    """At inference the experts are one averaged adapter: FLOPs equal DyT with a
    plain adapter of the same width."""
    x = images(1)
    adamix_flops = DyTFlopCounter(tiny(DyTViT, adapter_cfg=ADAMIX), x).static_flops
    plain = dict(ADAMIX, num_experts=1, mixing='router')
    assert adamix_flops == DyTFlopCounter(tiny(DyTViT, adapter_cfg=plain), x).static_flops


@pytest.mark.parametrize('adapter_cfg,message', [
    (dict(ADAMIX, num_experts=1), "mixing='adamix' is not one of"),
    (dict(ADAMIX, mixing='soup'), "mixing='soup' is not one of \\('router', 'adamix'\\)"),
    (dict(ADAMIX, share_up='no'), 'adapter_cfg.share_up'),
    (dict(ADAMIX, mixing='router', share_up=True), "share_up is an AdaMix setting"),
])
def test_bad_settings_are_named(adapter_cfg, message):
    with pytest.raises(ValueError, match=message):
        DyTViT(arch='tiny', adapter_cfg=adapter_cfg)


ADAMIX_CONFIGS = {
    'vit-b-p16-dyt-adamix4_d64_8xb128-100e_cifar100-224px.py':
    'vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py',
    'vit-b-p16-dyt-adamix4_d16_1xb64-100e_vtab1k-224px.py':
    'vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py',
}


@pytest.mark.parametrize('name', sorted(ADAMIX_CONFIGS))
def test_configs_change_only_the_adapter_and_the_consistency_loss(name):
    """The DyT config with 4 AdaMix experts (one shared up-projection) and a
    consistency loss of weight 1; with a tiny ViT it builds AdaMix adapters of
    the config's width and trains."""
    cfg, base = copy.deepcopy(dyt_config(name)), dyt_config(ADAMIX_CONFIGS[name])
    expected = copy.deepcopy(base.model)
    expected.backbone.adapter_cfg.update(num_experts=4, mixing='adamix')
    expected.update(consistency_loss_weight=1.0)
    assert cfg.model == expected
    for key in ('optim_wrapper', 'param_scheduler', 'train_cfg', 'train_dataloader'):
        assert cfg[key] == base[key], key
    shrink_to_tiny(cfg.model.backbone)
    cfg.model.head.in_channels = TINY_ARCH['embed_dims']
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg.model)
    model.init_weights()
    adapter = model.backbone.blocks[0].adapter
    assert type(adapter) is AdaMixAdapter
    width, bottleneck = TINY_ARCH['embed_dims'], base.model.backbone.adapter_cfg.bottleneck
    assert adapter.down_weight.shape == (4, width, bottleneck)
    assert adapter.up_weight.shape == (1, bottleneck, width)  # shared
    losses = model.loss(images(2), [DataSample().set_gt_label(i) for i in range(2)])
    assert 'loss_consistency' in losses
    assert all(torch.isfinite(v) for v in losses.values())


@pytest.mark.parametrize('share_up, ups', [(True, 1), (False, E)])
def test_the_config_key_chooses_the_up_projections(share_up, ups):
    backbone = tiny(DyTViT, adapter_cfg=dict(ADAMIX, share_up=share_up))
    adapter = backbone.blocks[0].adapter
    assert adapter.up_weight.shape[0] == ups
