import copy

import pytest
import torch

import mmvitdyn  # noqa: F401
from helpers.classifiers import dyt_classifier as build
from helpers.classifiers import labelled_batch as batch
from helpers.classifiers import sgd
from helpers.dyt import dyt_param_names, spread_gates
from helpers.models import TINY_ARCH, tiny_backbone_cfg


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


def test_distillation_is_kl_from_complete_to_dynamic_and_rate_loss_is_squared_gap():
    """loss_distill = KL(softmax(z') || softmax(z)), batch mean; loss_rate = 2 (rate - 0.5)^2."""
    model = build(
        backbone=tiny_backbone_cfg(
            'DyTViT',
            adapter_cfg=dict(bottleneck=8, scale=1.0, dropout=0.0),
            dispatcher_cfg=dict(tau=5.0, gumbel=False),  # no noise: the passes can be repeated
            out_type='avg_featmap'))  # skipped MLPs change the pooled patch tokens directly
    spread_gates(model.backbone)  # about half the tokens skip the MLP
    for name, param in model.named_parameters():  # the two passes' logits far apart
        if '.mlp.' in name or name.startswith('head.'):
            torch.nn.init.normal_(param, std=0.5)
    processed = model.data_preprocessor(batch(), True)
    inputs, samples = processed['inputs'], processed['data_samples']
    losses = model.loss(inputs, samples)
    with torch.no_grad():
        dynamic = model.head(model.extract_feat(inputs))
        masks = [block.masks['mlp'][:, 1:] for block in model.backbone.blocks]  # patch tokens
        with model.backbone.complete_mode():
            complete = model.head(model.extract_feat(inputs))
    log_p, log_q = complete.log_softmax(-1), dynamic.log_softmax(-1)  # teacher, student
    kl = (log_p.exp() * (log_p - log_q)).sum(-1).mean()
    reverse = (log_q.exp() * (log_q - log_p)).sum(-1).mean()
    torch.testing.assert_close(losses['loss_distill'], kl)
    assert abs(float(kl - reverse)) > 0.05  # the direction is told apart (0.73 vs 0.89)
    rate = torch.cat([m.flatten() for m in masks]).mean()
    assert 0 < rate < 1
    torch.testing.assert_close(losses['loss_rate'], 2.0 * (rate - 0.5)**2)


@pytest.mark.parametrize('switch,absent', [
    (dict(complete_loss=False), 'loss_cls_complete'),
    (dict(distill_loss=False), 'loss_distill'),
    (dict(rate_loss_weight=0.0), 'loss_rate'),
])
def test_each_term_can_be_switched_off(switch, absent):
    model = build(**switch)
    log = model.train_step(batch(), sgd(model))
    assert absent not in log and 'loss_cls' in log


@pytest.mark.parametrize(
    'switch', [dict(), dict(complete_loss=False)], ids=['complete-CE', 'teacher-only'])
def test_two_pass_step_updates_like_the_single_graph_loss(switch):
    """Back-propagating the complete pass first (or, as a mere teacher, building no
    graph for it) changes memory and time, not gradients."""
    model = build(**switch)
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
