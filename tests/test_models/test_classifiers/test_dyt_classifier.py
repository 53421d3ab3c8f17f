import copy
import warnings

import pytest
import torch
from mmengine.optim import AmpOptimWrapper, OptimWrapper
from mmengine.optim.optimizer import amp_optimizer_wrapper

import mmvitdyn  # noqa: F401
from helpers.classifiers import dyt_classifier as build
from helpers.classifiers import labelled_batch as batch
from helpers.classifiers import sgd
from helpers.dyt import dyt_param_names, spread_gates
from helpers.models import TINY_ARCH, tiny_backbone_cfg
from mmvitdyn.models.dyt_two_pass import backward_now


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


def trainable(model):
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def sgd_on_the_single_graph_loss(model, iterations, accumulate=1):
    """Trainable weights after plain SGD (lr 1) on ``model.loss()`` (both passes in one
    graph), written out: the loss of iteration i (batch and noise seeded by i) divided
    by its accumulation factor, a step after every ``accumulate`` iterations and after
    the last; the iterations after the last full group (the remainder) share a factor."""
    full = iterations - iterations % accumulate
    for i in range(iterations):
        factor = accumulate if i < full else iterations - full
        data = model.data_preprocessor(batch(seed=i), True)
        torch.manual_seed(10 + i)
        losses = model.loss(data['inputs'], data['data_samples'])
        (sum(v for k, v in losses.items() if k.startswith('loss')) / factor).backward()
        if (i + 1) % accumulate == 0 or i + 1 == iterations:
            with torch.no_grad():
                for param in model.parameters():
                    if param.grad is not None:
                        param -= param.grad
                        param.grad = None
    return trainable(model)


def two_pass_steps(model, optim_wrapper, iterations):
    """Trainable weights after ``iterations`` of ``train_step`` (batch and noise seeded
    as in :func:`sgd_on_the_single_graph_loss`)."""
    optim_wrapper.initialize_count_status(model, 0, iterations)
    for i in range(iterations):
        torch.manual_seed(10 + i)
        model.train_step(batch(seed=i), optim_wrapper)
    return trainable(model)


def assert_moved_alike(actual, expected, start, rtol=1e-4):
    """Every trainable weight moved, and as far as in ``expected`` (to ``rtol`` of its move)."""
    assert actual.keys() == expected.keys() == start.keys()
    for name in start:
        move = expected[name] - start[name]
        assert float(move.abs().max()) > 1e-6, f'{name} did not move'
        error = (actual[name] - start[name] - move).norm() / move.norm()
        assert float(error) < rtol, f'{name}: relative error {float(error):.2e} of its move'


class ScaleInBackward(OptimWrapper):
    """Scales the loss inside ``backward`` and unscales the gradients in ``step``, as
    mmengine's ApexOptimWrapper does through apex: it has no ``loss_scaler``."""
    scale = 1024.0

    def backward(self, loss, **kwargs):
        super().backward(loss * self.scale, **kwargs)

    def step(self, **kwargs):
        for group in self.optimizer.param_groups:
            for param in group['params']:
                if param.grad is not None:
                    param.grad.div_(self.scale)
        super().step(**kwargs)


@pytest.mark.parametrize(
    'switch', [dict(), dict(complete_loss=False)], ids=['complete-CE', 'teacher-only'])
def test_two_pass_step_updates_like_the_single_graph_loss(switch):
    """Back-propagating the complete pass first (or, as a mere teacher, building no
    graph for it) changes memory and time, not gradients."""
    model = build(**switch)
    reference, start = copy.deepcopy(model), trainable(model)
    actual = two_pass_steps(model, sgd(model), 1)
    assert_moved_alike(actual, sgd_on_the_single_graph_loss(reference, 1), start)


def test_two_pass_step_accumulates_like_the_single_graph_loss():
    """Three iterations accumulated by 2, through a wrapper that scales the loss in
    ``backward``: a step after the second iteration (losses halved) and after the third
    (the remainder, its loss whole). The complete pass's loss goes through the
    wrapper's scaling and counts no iteration of its own."""
    model = build()
    reference, start = copy.deepcopy(model), trainable(model)
    params = [p for p in model.parameters() if p.requires_grad]
    optim_wrapper = ScaleInBackward(torch.optim.SGD(params, lr=1.0), accumulative_counts=2)
    actual = two_pass_steps(model, optim_wrapper, 3)
    assert optim_wrapper._inner_count == 3
    assert_moved_alike(actual, sgd_on_the_single_graph_loss(reference, 3, accumulate=2), start)


def test_two_pass_step_under_amp_scales_both_passes(monkeypatch):
    """mmengine's AmpOptimWrapper on the CPU (bfloat16 autocast, a CPU GradScaler of
    scale 1024): its step unscales the complete pass's gradients as well."""
    monkeypatch.setattr(amp_optimizer_wrapper, 'is_cuda_available', lambda: True)
    model = build()
    reference, start = copy.deepcopy(model), trainable(model)
    params = [p for p in model.parameters() if p.requires_grad]
    with warnings.catch_warnings():  # its CUDA GradScaler disables itself: replaced below
        warnings.simplefilter('ignore')
        optim_wrapper = AmpOptimWrapper(optimizer=torch.optim.SGD(params, lr=1.0), dtype='bfloat16')
    optim_wrapper.loss_scaler = torch.amp.GradScaler('cpu', init_scale=1024.0)
    actual = two_pass_steps(model, optim_wrapper, 1)
    with optim_wrapper.optim_context(reference):  # the same autocast
        expected = sgd_on_the_single_graph_loss(reference, 1)
    assert_moved_alike(actual, expected, start, rtol=3e-2)  # bfloat16 sums: 4e-3 here


def test_two_pass_step_refuses_what_is_not_an_optim_wrapper():
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    with pytest.raises(TypeError, match='optim_wrapper is a SGD: the two-pass step'):
        backward_now(optimizer, torch.zeros(()))


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
