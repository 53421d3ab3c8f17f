"""DyT's top-K dispatcher ablation: exactly round(r * N) tokens per image and part."""
import copy

import pytest
import torch
import torch.nn.functional as F
from mmengine.registry import DefaultScope
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from helpers.configs import DYT_CONFIG_DIR, RANDOM_FROZEN, dyt_config
from helpers.models import TINY_ARCH, images, shrink_to_tiny, tiny
from helpers.tools import run_tool
from mmvitdyn.models import DyTViT, TokenDispatcher

TOPK_DIGITS_CFG = DYT_CONFIG_DIR / 'vit-mini-p4-dyt-topk_1xb32-8e_digits-32px.py'
ADAPTER = dict(bottleneck=8, scale=1.0, dropout=0.0)


def tokens(b=4, n=16, c=8, seed=2):
    return torch.randn(b, 1 + n, c, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize('rate,kept', [(0.5, 8), (0.3, 5), (0.15625, 3), (1.0, 16)])
@pytest.mark.parametrize('training', [False, True])
def test_keeps_exactly_round_rn_per_image(rate, kept, training):
    """16 patch tokens: 0.3 * 16 = 4.8 -> 5 and 0.15625 * 16 = 2.5 -> 3 (halves round up)."""
    dispatcher = TokenDispatcher(8, mode='topk', topk_rate=rate).train(training)
    torch.nn.init.normal_(dispatcher.gate.weight)
    mask = dispatcher(tokens())
    assert torch.equal(mask[:, 0], torch.ones(4))  # the class token always runs
    assert mask[:, 1:].sum(1).tolist() == [kept] * 4
    assert set(mask.unique().tolist()) <= {0.0, 1.0}


def test_eval_keeps_the_largest_logits():
    dispatcher = TokenDispatcher(8, mode='topk', topk_rate=0.25).eval()
    torch.nn.init.normal_(dispatcher.gate.weight)
    x = tokens()
    logits = (x[:, 1:] @ dispatcher.gate.weight[0] + dispatcher.gate.bias).detach()
    expected = torch.zeros(4, 16)
    for b in range(4):
        order = sorted(range(16), key=lambda n: -float(logits[b, n]))
        expected[b, order[:4]] = 1
    assert torch.equal(dispatcher(x)[:, 1:], expected)


def test_straight_through_gradient_is_the_sigmoid_of_the_logit():
    """Forward: hard top-k; backward: d mask / d logit = sigmoid'(l / tau) / tau."""
    tau = 5.0
    dispatcher = TokenDispatcher(8, tau=tau, gumbel=False, mode='topk', topk_rate=0.5).train()
    torch.nn.init.normal_(dispatcher.gate.weight)
    x = tokens()
    weights = torch.randn(4, 16, generator=torch.Generator().manual_seed(5))
    mask = dispatcher(x)[:, 1:]
    (mask * weights).sum().backward()
    logits = (x[:, 1:] @ dispatcher.gate.weight[0] + dispatcher.gate.bias).detach()
    s = torch.sigmoid(logits / tau)
    d_logit = weights * s * (1 - s) / tau
    torch.testing.assert_close(dispatcher.gate.weight.grad[0], (d_logit[..., None] * x[:, 1:]).sum(
        (0, 1)))
    torch.testing.assert_close(dispatcher.gate.bias.grad[0], d_logit.sum())
    top = logits.topk(8, dim=1).indices
    assert torch.equal(mask.detach(), torch.zeros(4, 16).scatter_(1, top, 1.0))


@pytest.mark.parametrize('kwargs,message', [
    (dict(mode='bottom'), "mode='bottom' is not one of ('threshold', 'topk', 'soft_topk')"),
    (dict(mode='topk'), 'topk_rate=None must be a finite number in (0, 1]'),
    (dict(mode='topk', topk_rate=1.5), 'topk_rate=1.5 must be a finite number in (0, 1]'),
    (dict(topk_rate=0.5), "topk_rate=0.5 is only for mode='topk'"),
])
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message.replace('(', r'\(').replace(')', r'\)')):
        TokenDispatcher(8, **kwargs)


def test_keep_rate_comes_from_target_rate():
    with pytest.raises(ValueError, match='dispatcher_cfg.topk_rate=0.3 is not a setting'):
        DyTViT(arch='tiny', dispatcher_cfg=dict(mode='topk', topk_rate=0.3))
    model = tiny(DyTViT, target_rate=0.3, dispatcher_cfg=dict(mode='topk'), adapter_cfg=ADAPTER)
    assert all(d.topk_rate == 0.3 for b in model.dyt_blocks() for d in b.dispatchers.values())


@pytest.mark.parametrize('dispatch', ['mlp', 'attn', 'attn_mlp', 'layer'])
def test_every_variant_keeps_k_and_packed_equals_masked(dispatch):
    """round(0.3 * 16) = 5 tokens per image in every dispatched part; the packed
    inference path gives the masked path's outputs."""
    model = tiny(
        DyTViT,
        dispatch=dispatch,
        target_rate=0.3,
        dispatcher_cfg=dict(mode='topk'),
        adapter_cfg=ADAPTER,
        out_type='raw')
    for block in model.dyt_blocks():
        torch.nn.init.normal_(block.adapter.up.weight, std=0.1)
        for dispatcher in block.dispatchers.values():
            torch.nn.init.normal_(dispatcher.gate.weight)
    x = images(4)
    with torch.no_grad():
        packed = model(x)[0]
        masks = model.dispatch_masks()
        model.set_packed(False)
        masked = model(x)[0]
    assert all(m.sum(1).tolist() == [5] * 4 for block in masks for m in block.values())
    assert len(masks) == 3 and all(len(m) == len(dispatch.split('_')) for m in masks)
    torch.testing.assert_close(packed, masked, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize('dispatch', ['mlp', 'attn_mlp'])
def test_gradients_reach_exactly_adapters_and_gates(dispatch):
    """Trained with top-K masks, the frozen ViT gets no gradient; every adapter and
    gate gets one (the gates through the straight-through sigmoid)."""
    model = tiny(
        DyTViT,
        dispatch=dispatch,
        target_rate=0.3,
        dispatcher_cfg=dict(mode='topk'),
        adapter_cfg=ADAPTER,
        out_type='raw').train()  # every token reaches the output: every gate matters
    model.attach_objective('this test, which adds its own loss terms')
    for block in model.dyt_blocks():
        torch.nn.init.normal_(block.adapter.up.weight, std=0.1)
    model(images(4))[0].square().sum().backward()
    for name, param in model.named_parameters():
        if '.adapter.' in name or '.dispatchers.' in name:
            assert param.grad is not None and float(param.grad.abs().sum()) > 0, name
        else:
            assert param.grad is None and not param.requires_grad, name


def test_mlp_topk_model_equals_hand_computation():
    """Packed inference of a top-K MLP-dispatch DyT ViT against plain torch: per block
    x += Attn(LN1 x); m = top-5 of the gate logits; x += m * MLP(LN2 x) + Adapter(x)."""
    model = tiny(
        DyTViT,
        target_rate=0.3,
        dispatcher_cfg=dict(mode='topk'),
        adapter_cfg=ADAPTER,
        out_type='raw',
        final_norm=False)
    for block in model.dyt_blocks():
        torch.nn.init.normal_(block.adapter.up.weight, std=0.1)
        torch.nn.init.normal_(block.dispatchers['mlp'].gate.weight)
    x = images(2)
    with torch.no_grad():
        out = model(x)[0]
        t, _ = model.embed(x)
        for blk in model.blocks:
            h = F.layer_norm(t, (32, ), blk.norm1.weight, blk.norm1.bias, 1e-6)
            q, k, v = (h @ blk.attn.qkv.weight.T + blk.attn.qkv.bias).view(2, 17, 3, 4, 8).unbind(2)
            w = torch.einsum('bqhd,bkhd->bhqk', q, k).mul(8**-0.5).softmax(-1)
            a = torch.einsum('bhqk,bkhd->bqhd', w, v).reshape(2, 17, 32)
            t = t + a @ blk.attn.proj.weight.T + blk.attn.proj.bias
            gate = blk.dispatchers['mlp'].gate
            logits = (t[:, 1:] @ gate.weight[0] + gate.bias)
            m = torch.zeros(2, 16).scatter_(1, logits.topk(5, dim=1).indices, 1.0)
            m = torch.cat([torch.ones(2, 1), m], 1)[..., None]
            h = F.layer_norm(t, (32, ), blk.norm2.weight, blk.norm2.bias, 1e-6)
            mlp = F.gelu(h @ blk.mlp.fc1.weight.T + blk.mlp.fc1.bias) @ blk.mlp.fc2.weight.T
            mlp = mlp + blk.mlp.fc2.bias
            ad = blk.adapter
            adapter = F.relu(t @ ad.down.weight.T + ad.down.bias) @ ad.up.weight.T + ad.up.bias
            t = t + m * mlp + adapter
    torch.testing.assert_close(out, t, atol=1e-5, rtol=1e-5)


def test_one_training_iteration_through_train_py(data_workspace, tmp_path):
    """The digits top-K config trains two iterations (the schedule needs two epochs
    of one batch): the logged activation rate is exactly 32 / 64."""
    proc = run_tool([
        'train.py', TOPK_DIGITS_CFG, '--work-dir', tmp_path, '--cfg-options',
        'train_cfg.max_epochs=2', 'train_cfg.val_interval=100', 'train_dataloader.batch_size=8',
        'train_dataloader.dataset.indices=8', 'default_hooks.logger.interval=1',
        'default_hooks.checkpoint.interval=1', RANDOM_FROZEN
    ], data_workspace)
    line = next(s for s in proc.stdout.splitlines() + proc.stderr.splitlines()
                if 'Epoch(train)' in s)
    assert 'act_rate: 0.5000 ' in line and 'loss_rate' not in line
    assert (tmp_path / 'epoch_2.pth').exists()


CONFIGS = {
    'vit-b-p16-dyt-topk_d64_8xb128-100e_cifar100-224px.py':
    'vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py',
    'vit-b-p16-dyt-topk_d16_1xb64-100e_vtab1k-224px.py':
    'vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py',
}


@pytest.mark.parametrize('name', sorted(CONFIGS))
def test_configs_change_only_the_dispatcher_and_the_rate_loss(name):
    """The DyT config with mode='topk' and no rate loss; with a tiny ViT it trains and
    keeps round(0.5 * 16) = 8 of 16 patch tokens in every block."""
    cfg, base = copy.deepcopy(dyt_config(name)), dyt_config(CONFIGS[name])
    base_model = copy.deepcopy(base.model)
    base_model.rate_loss_weight = 0.0
    base_model.backbone.dispatcher_cfg = dict(mode='topk')
    assert cfg.model == base_model
    for key in ('optim_wrapper', 'param_scheduler', 'train_cfg', 'train_dataloader'):
        assert cfg[key] == base[key], key
    shrink_to_tiny(cfg.model.backbone)
    cfg.model.head.in_channels = TINY_ARCH['embed_dims']
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg.model)
    model.init_weights()
    losses = model.loss(images(2), [DataSample().set_gt_label(i) for i in range(2)])
    assert 'loss_rate' not in losses and float(losses['act_rate']) == 0.5
    assert all(torch.isfinite(v) for v in losses.values())
