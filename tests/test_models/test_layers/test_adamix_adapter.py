"""AdaMix: a random down/up expert pair per training forward, their average at inference."""
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


def adamix(scale=0.5):
    """An AdaMix adapter whose experts all differ (they start equal)."""
    adapter = AdaMixAdapter(C, D, num_experts=E, scale=scale, dropout=0.0)
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


def test_experts_start_equal_and_the_adapter_starts_as_zero():
    torch.manual_seed(0)
    adapter = AdaMixAdapter(C, D, num_experts=E)
    for param in (adapter.down_weight, adapter.down_bias, adapter.up_weight, adapter.up_bias):
        assert all(torch.equal(param[e], param[0]) for e in range(E))
    assert adapter.down_weight.abs().max() > 0 and adapter.up_weight.abs().max() == 0
    assert adapter.eval()(tokens()).abs().max() == 0


def test_gradients_reach_the_drawn_pair_only():
    adapter, x = adamix(), tokens()
    torch.manual_seed(5)
    adapter.train()(x).square().sum().backward()
    torch.manual_seed(5)
    down, up = torch.randint(E, (2, )).tolist()  # the pair the forward drew
    for name, expert in (('down_weight', down), ('down_bias', down), ('up_weight', up), ('up_bias',
                                                                                         up)):
        grad = getattr(adapter, name).grad
        assert [bool(grad[e].abs().sum() > 0) for e in range(E)] == [e == expert
                                                                     for e in range(E)], name


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
])
def test_bad_settings_are_named(adapter_cfg, message):
    with pytest.raises(ValueError, match=message):
        DyTViT(arch='tiny', adapter_cfg=adapter_cfg)


ADAMIX_CONFIGS = {
    'vit-base-p16-dyt-adamix4_d64_8xb128-100e_cifar100-224px.py':
    'vit-base-p16-dyt_d64_8xb128-100e_cifar100-224px.py',
    'vit-base-p16-dyt_adamix4-d16_1xb64-100e_vtab1k-224px.py':
    'vit-base-p16-dyt_d16_1xb64-100e_vtab1k-224px.py',
}


@pytest.mark.parametrize('name', sorted(ADAMIX_CONFIGS))
def test_configs_change_only_the_adapter(name):
    """The DyT config with 4 AdaMix experts; with a tiny ViT it builds AdaMix
    adapters of the config's width and trains."""
    cfg, base = copy.deepcopy(dyt_config(name)), dyt_config(ADAMIX_CONFIGS[name])
    expected = copy.deepcopy(base.model)
    expected.backbone.adapter_cfg.update(num_experts=4, mixing='adamix')
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
    assert adapter.down_weight.shape == (4, TINY_ARCH['embed_dims'],
                                         base.model.backbone.adapter_cfg.bottleneck)
    losses = model.loss(images(2), [DataSample().set_gt_label(i) for i in range(2)])
    assert all(torch.isfinite(v) for v in losses.values())
