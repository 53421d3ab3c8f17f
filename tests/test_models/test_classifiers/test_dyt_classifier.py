import copy

import pytest
import torch
from mmengine.optim import OptimWrapper
from mmengine.registry import DefaultScope
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

import mmvitdyn  # noqa: F401
from helpers.dyt import dyt_param_names
from helpers.models import IMG_SIZE, TINY_ARCH, tiny_backbone_cfg


def build(**kwargs):
    cfg = dict(
        type='DyTImageClassifier',
        data_preprocessor=dict(type='ClsDataPreprocessor', mean=[127.5] * 3, std=[64.] * 3),
        backbone=tiny_backbone_cfg(
            'DyTViT', adapter_cfg=dict(bottleneck=8, scale=1.0, dropout=0.0)),
        head=dict(type='LinearClsHead', num_classes=3, in_channels=TINY_ARCH['embed_dims']))
    cfg.update(kwargs)
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg)
    model.init_weights()
    # Non-zero adapters so every path carries signal.
    for block in model.backbone.dyt_blocks():
        torch.nn.init.normal_(block.adapter.up.weight, std=0.1)
    return model


def batch(n=6):
    g = torch.Generator().manual_seed(3)
    return dict(
        inputs=[
            torch.randint(0, 256, (3, IMG_SIZE, IMG_SIZE), generator=g, dtype=torch.uint8)
            for _ in range(n)
        ],
        data_samples=[DataSample().set_gt_label(i % 3) for i in range(n)])


def sgd(model):
    return OptimWrapper(torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=1.0))


def test_train_step_logs_every_term_and_rates():
    model = build()
    log = model.train_step(batch(), sgd(model))
    assert {
        'loss', 'loss_cls', 'loss_cls_complete', 'loss_distill', 'loss_rate', 'act_rate',
        'act_rate/0.mlp', 'act_rate/1.mlp'
    } <= set(log)
    terms = ('loss_cls', 'loss_cls_complete', 'loss_distill', 'loss_rate')
    total = sum(float(log[k]) for k in terms)
    assert float(log['loss']) == pytest.approx(total, rel=1e-5)


@pytest.mark.parametrize('switch,absent', [
    (dict(complete_loss=False), 'loss_cls_complete'),
    (dict(distill_loss=False), 'loss_distill'),
    (dict(rate_loss_weight=0.0), 'loss_rate'),
])
def test_each_term_can_be_switched_off(switch, absent):
    model = build(**switch)
    log = model.train_step(batch(), sgd(model))
    assert absent not in log and 'loss_cls' in log


def test_two_pass_step_updates_like_the_single_graph_loss():
    """Back-propagating the complete pass first changes memory, not gradients."""
    model = build()
    reference = copy.deepcopy(model)
    data = batch()
    torch.manual_seed(5)
    model.train_step(copy.deepcopy(data), sgd(model))

    torch.manual_seed(5)
    wrapper = sgd(reference)
    processed = reference.data_preprocessor(copy.deepcopy(data), True)
    losses = reference.loss(processed['inputs'], processed['data_samples'])
    parsed, _ = reference.parse_losses(losses)
    wrapper.update_params(parsed)

    moved = 0
    for (name, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
        torch.testing.assert_close(p, q, atol=1e-6, rtol=1e-5, msg=name)
        moved += int(p.requires_grad)
    assert moved > 0


def test_frozen_backbone_weights_do_not_move():
    model = build()
    before = {n: p.clone() for n, p in model.named_parameters()}
    model.train_step(batch(), sgd(model))
    moving = dyt_param_names(TINY_ARCH['num_layers'], prefix='backbone.')
    moving |= {'head.fc.weight', 'head.fc.bias'}
    assert {n for n, p in model.named_parameters() if not torch.equal(before[n], p)} == moving


def test_plain_sigmoid_ablation_trains():
    model = build(backbone=tiny_backbone_cfg('DyTViT', dispatcher_cfg=dict(tau=5.0, gumbel=False)))
    log = model.train_step(batch(), sgd(model))
    assert torch.isfinite(log['loss'])


def test_adaptformer_baseline_has_no_dispatch_terms():
    model = build(backbone=tiny_backbone_cfg('DyTViT', dispatch=None))
    log = model.train_step(batch(), sgd(model))
    assert set(k for k in log if k.startswith('loss')) == {'loss', 'loss_cls'}


def test_needs_a_dyt_backbone():
    with pytest.raises(TypeError, match='DyT backbone'):
        build(backbone=tiny_backbone_cfg('ViT'))
