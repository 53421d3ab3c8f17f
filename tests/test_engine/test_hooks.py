from types import SimpleNamespace

import pytest
import torch
from mmengine.logging import MessageHub

from helpers.models import TINY_ARCH, images, tiny
from mmvitdyn.engine import DispatchRateHook, GumbelTemperatureHook
from mmvitdyn.models import DyTViT, TokenDispatcher


def runner(model, iteration=0, max_iters=11):
    return SimpleNamespace(
        model=model,
        iter=iteration,
        max_iters=max_iters,
        message_hub=MessageHub.get_instance('test_hooks'))


@pytest.mark.parametrize('schedule,middle', [('linear', 2.55), ('cosine', 2.55), ('constant', 5.0)])
def test_temperature_schedules(schedule, middle):
    hook = GumbelTemperatureHook(start=5.0, end=0.1, schedule=schedule)
    assert hook.temperature(0.0) == pytest.approx(5.0)
    assert hook.temperature(0.5) == pytest.approx(middle)
    assert hook.temperature(1.0) == pytest.approx(0.1 if schedule != 'constant' else 5.0)


def test_temperature_hook_sets_every_dispatcher():
    model = tiny(DyTViT, dispatch='attn_mlp')
    hook = GumbelTemperatureHook(start=5.0, end=1.0)
    hook.before_train_iter(runner(model, iteration=10, max_iters=11), 0)
    taus = [m.tau for m in model.modules() if isinstance(m, TokenDispatcher)]
    assert len(taus) == 2 * TINY_ARCH['num_layers'] and all(t == pytest.approx(1.0) for t in taus)


def test_bad_schedule():
    with pytest.raises(ValueError, match='schedule'):
        GumbelTemperatureHook(schedule='step')


def test_dispatch_rate_hook_averages_over_images():
    model = SimpleNamespace(backbone=tiny(DyTViT))
    fake = runner(model)
    hook = DispatchRateHook()
    hook.before_val_epoch(fake)
    rates = []
    for n in (3, 1):
        model.backbone(images(n, seed=n))
        rates.append((model.backbone.activation_rates()['act_rate'], n))
        hook.after_val_iter(fake, 0, data_batch=dict(inputs=[None] * n))
    hook.after_val_epoch(fake)
    expected = sum(r * n for r, n in rates) / 4
    assert fake.message_hub.get_scalar('val/act_rate').current() == pytest.approx(expected)
    assert fake.message_hub.get_scalar('val/act_rate/1.mlp') is not None


def test_dispatch_rate_hook_counts_every_backbone_forward():
    """Sliding-window inference runs the backbone once per crop: every run counts."""
    model = SimpleNamespace(backbone=tiny(DyTViT))
    torch.nn.init.normal_(model.backbone.blocks[0].dispatchers['mlp'].gate.weight, std=1.0)
    fake = runner(model)
    hook = DispatchRateHook()
    hook.before_test_epoch(fake)
    rates = []
    for n in (2, 1, 3):  # the crops of one test iteration
        model.backbone(images(n, seed=n))
        rates.append((model.backbone.activation_rates()['act_rate'], n))
    hook.after_test_epoch(fake)
    model.backbone(images(4))  # after the epoch: not counted
    expected = sum(r * n for r, n in rates) / 6
    assert fake.message_hub.get_scalar('test/act_rate').current() == pytest.approx(expected)
