"""EViTKeepRateHook: EViT's keep-rate warm-up, per iteration, in a real training loop."""
import copy
import math
from types import SimpleNamespace

import pytest
import torch
from mmengine.logging import MessageHub
from mmengine.model import BaseModel
from mmengine.registry import HOOKS, MODELS
from mmengine.runner import Runner

from helpers.configs import dyt_config
from helpers.models import images, shrink_to_tiny, tiny
from mmvitdyn.engine.hooks import EViTKeepRateHook
from mmvitdyn.models import AdapterViT

WARMUP_CONFIG = 'vit-b-p16-adaptformer-evit-warmup_d64_8xb128-100e_cifar100-224px.py'
# adjust_keep_rate(it, it // 3, warmup_epochs=1, total_epochs=3, ITERS_PER_EPOCH=3,
# base_keep_rate=0.5) of EViT's public helpers.py, run once for it = 0..11.
PUBLIC_RATES = [
    1, 1, 1, 1.0, 0.9665063509461097, 0.875, 0.75, 0.625, 0.5334936490538903, 0.5, 0.5, 0.5
]


def public_rule(it, iters_per_epoch, start, shrink, target):
    """EViT's adjust_keep_rate, written out: 1 before ``start``, the target from
    ``start + shrink`` on, a half cosine over the iterations in between."""
    epoch = it // iters_per_epoch
    if epoch < start:
        return 1.0
    if epoch >= start + shrink:
        return target
    done = (it - iters_per_epoch * start) / (iters_per_epoch * shrink)
    return target + (1 - target) * (math.cos(done * math.pi) + 1) * 0.5


SCHEDULES = [(1, 2, 3, 0.5), (2, 3, 4, 0.7), (0, 0, 5, 0.3), (0, 1, 7, 0.25)]


@pytest.mark.parametrize('start, shrink, iters_per_epoch, target', SCHEDULES)
def test_rates_follow_the_public_schedule(start, shrink, iters_per_epoch, target):
    """Warm-ups starting late or at once, no shrinking epochs (the target at once)."""
    hook = EViTKeepRateHook(start_epoch=start, shrink_epochs=shrink)
    total = iters_per_epoch * (start + shrink + 2)
    rates = [hook.scheduled_rate(it, iters_per_epoch, target) for it in range(total)]
    assert rates == pytest.approx(
        [public_rule(it, iters_per_epoch, start, shrink, target) for it in range(total)], abs=1e-12)


class EViTClassifier(BaseModel):
    """The tiny DyT ViT with EViT at block 1 (keep 0.5 of 16 patches) and a toy loss;
    records the keep rate and the tokens after block 1 of every training forward."""

    def __init__(self):
        super().__init__()
        self.backbone = tiny(
            AdapterViT, token_reduction=dict(type='EViT', keep_rate=0.5, locations=(1, )))
        self.seen = []

    def forward(self, inputs, data_samples=None, mode='loss'):
        feats, = self.backbone(inputs)
        self.seen.append((self.backbone.token_reduction.current_rate,
                          self.backbone.last_reduction.token_counts[1]))
        return dict(loss=feats.pow(2).mean())


def test_training_loop_sets_the_rate_the_model_uses(tmp_path):
    """4 epochs of 3 iterations, warm-up from epoch 1 over 2 epochs: the model runs
    each iteration at the public schedule's rate, and keeps ceil(rate * 16) patches."""
    model = EViTClassifier()
    runner = Runner(
        model=model,
        work_dir=str(tmp_path),
        train_dataloader=dict(
            dataset=[dict(inputs=image) for image in images(3)],
            sampler=dict(type='DefaultSampler', shuffle=False),
            collate_fn=dict(type='default_collate'),
            batch_size=1),
        optim_wrapper=dict(optimizer=dict(type='SGD', lr=0.0)),
        train_cfg=dict(by_epoch=True, max_epochs=4),
        default_hooks=dict(checkpoint=None, logger=None),
        custom_hooks=[EViTKeepRateHook(start_epoch=1, shrink_epochs=2)])
    runner.train()
    rates = [rate for rate, _ in model.seen]
    assert rates == pytest.approx(PUBLIC_RATES, abs=1e-12)
    # 1 class token + ceil(rate * 16) kept + 1 fused; all 16 kept while ceil reaches 16
    kept = [math.ceil(rate * 16) for rate in PUBLIC_RATES]
    assert [n for _, n in model.seen] == [1 + k + (k < 16) for k in kept]
    assert [n for _, n in model.seen] == [17, 17, 17, 17, 17, 16, 14, 12, 11, 10, 10, 10]
    assert runner.message_hub.get_scalar('train/keep_rate').current() == 0.5
    assert model.backbone.token_reduction.keep_rate == 0.5  # the target is never overwritten


def test_settings_and_models_without_evit_are_refused():
    with pytest.raises(ValueError, match='start_epoch=-1 must be an int >= 0'):
        EViTKeepRateHook(start_epoch=-1)
    with pytest.raises(ValueError, match='shrink_epochs=1.5 must be an int >= 0'):
        EViTKeepRateHook(shrink_epochs=1.5)
    runner = type('FakeRunner', (), dict(model=torch.nn.Linear(2, 2)))
    with pytest.raises(ValueError, match='found no EViT module in the model'):
        EViTKeepRateHook().before_train(runner)


def test_warmup_config_builds_its_backbone_and_schedule():
    """The AdaptFormer + EViT config plus the hook at 3 + 33 of its 100 epochs (EViT's
    10 + 100 of 300), the base's hooks kept; on the tiny ViT the built hook sets the
    rate of the built backbone."""
    cfg = copy.deepcopy(dyt_config(WARMUP_CONFIG))
    hooks = [h.type for h in cfg.custom_hooks]
    assert hooks == ['DispatchRateHook', 'BestOverEpochsHook', 'EViTKeepRateHook']
    assert cfg.train_cfg.max_epochs == 100
    assert cfg.model.backbone.token_reduction == dict(
        type='EViT', keep_rate=0.7, locations=(3, 6, 9), fuse=True)
    shrink_to_tiny(cfg.model.backbone)
    cfg.model.backbone.token_reduction.locations = (1, )
    backbone = MODELS.build(cfg.model.backbone)
    hook = HOOKS.build(cfg.custom_hooks[-1])
    assert (hook.start_epoch, hook.shrink_epochs) == (3, 33)
    runner = SimpleNamespace(
        model=backbone,
        iter=0,
        train_dataloader=[None] * 10,
        message_hub=MessageHub.get_instance('test_keep_rate_schedule_hook'))
    hook.before_train(runner)
    for epoch, rate in [(2, 1.0), (3, 1.0), (36, 0.7), (99, 0.7)]:
        runner.iter = 10 * epoch
        hook.before_train_iter(runner, 0)
        assert backbone.token_reduction.current_rate == pytest.approx(rate)
    runner.iter = 10 * 3 + 165  # half way through the 330 shrinking iterations
    hook.before_train_iter(runner, 5)
    assert backbone.token_reduction.current_rate == pytest.approx(0.85)
    assert backbone.token_reduction.keep_rate == 0.7
    backbone(images(1))
    assert backbone.last_reduction.token_counts == [17, 1 + 14 + 1, 16]  # ceil(.85 * 16)
