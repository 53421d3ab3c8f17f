"""``with_cp``: per-block activation checkpointing of the ViT backbones.

Each test runs the same seeded training step twice, without and with
``with_cp``, and compares what the step computed: the loss, the rate loss,
the activation rates and every trainable parameter's gradient, bitwise
(``torch.equal``; the recomputation repeats the same CPU kernels on the same
inputs). The models carry every random draw a recomputation must repeat:
Gumbel noise (DyT training), adapter dropout, dropout and stochastic depth.
"""
from contextlib import contextmanager
from typing import Iterator

import pytest
import torch
from mmengine.registry import DefaultScope
from mmpretrain.registry import MODELS

from helpers.classifiers import dyt_classifier, labelled_batch, sgd
from helpers.dyt import spread_gates
from helpers.learngene import learngene_with_counts, make_ancestry
from helpers.models import PATCH_SIZE, TINY_ARCH, images, tiny, tiny_backbone_cfg
from mmvitdyn.learngene import LearngeneViT
from mmvitdyn.models import DynamicViT, DyTViT, DyTViTDet, ViT
from mmvitdyn.models.backbones import vit as vit_module

# Random draws in every block: adapter dropout, dropout, stochastic depth.
ADAPTER = dict(bottleneck=8, scale=1.0, dropout=0.2)
RANDOM = dict(drop_rate=0.1, drop_path_rate=0.3)


def dyt(model_cls=DyTViT, **kwargs):
    """A tiny DyT backbone in training mode, gates spread (rates differ per image)
    and adapters non-zero, so masks, adapters and noise all change the loss."""
    model = tiny(model_cls, adapter_cfg=ADAPTER, **{**RANDOM, **kwargs})
    spread_gates(model)
    for block in model.dyt_blocks():
        torch.nn.init.normal_(block.adapter.up.weight, std=0.3)
    model.attach_objective('test')
    return model.train()


def weighted_sum(outputs) -> torch.Tensor:
    """A loss that reaches every output element with its own weight."""
    generator = torch.Generator().manual_seed(11)
    return sum((out * torch.randn(out.shape, generator=generator)).sum() for out in outputs)


@contextmanager
def saved_bytes() -> Iterator[list]:
    """Within the context, the bytes of the tensors autograd saves for the backward
    pass (outside checkpointed regions) are summed into the yielded list's item."""
    total = [0]

    def pack(tensor):
        total[0] += tensor.numel() * tensor.element_size()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        yield total


def step(model, x, with_cp: bool, two_pass: bool = False) -> dict:
    """One seeded training step (complete pass first when ``two_pass``, then the
    dynamic pass; one backward); what it computed, saved and left behind."""
    model.with_cp = with_cp
    model.zero_grad(set_to_none=True)
    torch.manual_seed(7)
    loss = 0
    with saved_bytes() as saved:
        if two_pass:
            with model.complete_mode():
                loss = weighted_sum(model(x))
        loss = loss + weighted_sum(model(x))
    dyt_model = isinstance(model, DyTViT)
    if dyt_model:
        rate_loss = model.rate_loss()
        loss = loss + 2 * rate_loss
        rates_before = model.activation_rates()
        masks = [dict(block.masks) for block in model.dyt_blocks()]
    loss.backward()
    result = dict(
        saved=saved[0],
        loss=loss.detach(),
        grads={
            n: p.grad
            for n, p in model.named_parameters() if p.requires_grad
        })
    if dyt_model:
        result.update(
            rate_loss=rate_loss.detach(),
            rates_before=rates_before,
            rates_after=model.activation_rates(),
            # the masks of the forward stay those the rate loss read (no recomputed ones)
            masks_kept=all(b.masks.keys() == m.keys() and all(b.masks[k] is m[k] for k in m)
                           for b, m in zip(model.dyt_blocks(), masks)),
            complete_after=[b.complete for b in model.dyt_blocks()])
    return result


def assert_same_step(model, x, **kwargs) -> dict:
    """The step without and with ``with_cp`` computes the same, bitwise, and
    with it keeps less than half the activations for the backward pass."""
    plain, checkpointed = (step(model, x, with_cp, **kwargs) for with_cp in (False, True))
    assert checkpointed['saved'] < 0.5 * plain['saved'], (checkpointed['saved'], plain['saved'])
    assert torch.equal(plain['loss'], checkpointed['loss'])
    assert plain['grads'].keys() == checkpointed['grads'].keys()
    for name, grad in plain['grads'].items():
        assert grad is not None and grad.abs().sum() > 0, name  # the test reaches it
        assert torch.equal(grad, checkpointed['grads'][name]), name
    if 'rate_loss' in plain:
        assert torch.equal(plain['rate_loss'], checkpointed['rate_loss'])
        assert checkpointed['rates_after'] == checkpointed['rates_before'] \
            == plain['rates_before']
        assert checkpointed['masks_kept']
        assert checkpointed['complete_after'] == [False] * len(model.blocks)
    return checkpointed


def test_vit_gradients_equal():
    model = tiny(ViT, out_type='avg_featmap', out_indices=(1, 2), **RANDOM).train()
    assert_same_step(model, images(3))


@pytest.mark.parametrize('dispatch', ['mlp', 'attn', 'attn_mlp', 'layer'])
def test_dyt_two_pass_step_with_gumbel_noise(dispatch):
    """Complete pass and dynamic pass in one graph: each block is recomputed in the
    mode of its pass, with the Gumbel noise and dropout of its first run."""
    model = dyt(dispatch=dispatch, out_type='avg_featmap')
    result = assert_same_step(model, images(3), two_pass=True)
    rate = result['rates_before']['act_rate']
    assert 0.2 < rate < 0.8  # tokens both run and skip the gated parts


def test_dyt_vitdet_windowed_and_global_blocks():
    # A 48 x 80 input: a 6 x 10 grid, windows of 4 padded; block 1 global.
    model = dyt(DyTViTDet, window_size=4, global_indices=(1, ), input_size=48, out_indices=(1, 2))
    for block in model.blocks:
        torch.nn.init.normal_(block.attn.rel_pos_h, std=0.2)
        torch.nn.init.normal_(block.attn.rel_pos_w, std=0.2)
    assert [block.attn.window_size for block in model.blocks] == [4, 0, 4]
    assert_same_step(model, images(2, size=(6 * PATCH_SIZE, 10 * PATCH_SIZE)))


def test_learngene_descendant_with_tied_ffns_and_heads(tmp_path):
    """A recomputed block computes with its supplied tensors again: the tied FFN
    run's W_t = g_t(W) and the tied heads (Swin's descendant refuses this)."""
    path = tmp_path / 'lg.pth'
    ancestry = make_ancestry()
    for block in ancestry.blocks:  # every FFN tensor non-zero, so g has gradients everywhere
        torch.nn.init.normal_(block.mlp.fc2.bias, std=0.1)
    learngene_with_counts(ancestry, [2, 2, 2], path)  # one FFN run over 3 layers
    torch.manual_seed(0)
    model = LearngeneViT(
        learngene=str(path),
        arch=dict(num_heads=3),
        tie_heads=True,
        img_size=32,
        out_type='avg_featmap',
        **RANDOM)
    model.init_weights()
    assert model.plan.is_expanded(model.plan.run_of(1)[1])
    grads = assert_same_step(model.train(), images(3))['grads']
    assert 'blocks.0.mlp.expansion.map_out_weight' in grads
    assert 'blocks.2.attn.shared_heads.qkv_weight' in grads


def test_token_reduction_pass_advances_once_per_block():
    model = dyt(token_reduction=dict(type='ToMe', r=2))
    result = assert_same_step(model, images(3))
    assert result['masks_kept']
    # 16 patches, 2 merged per block: the pass counted each block once
    assert model.last_reduction.token_counts == [15, 13, 11]


def test_dynamicvit_keep_policy():
    model = tiny(
        DynamicViT,
        arch=dict(TINY_ARCH, num_layers=4),
        prune_loc=(1, 2, 3),
        adapter_cfg=ADAPTER,
        **RANDOM).train()
    for block in model.blocks:
        torch.nn.init.normal_(block.adapter.up.weight, std=0.3)
    model.attach_objective('test')
    assert_same_step(model, images(3))
    assert len(model.decisions) == 3


def test_only_training_with_gradients_checkpoints(monkeypatch):
    calls = []
    real = vit_module.checkpoint_block
    monkeypatch.setattr(vit_module, 'checkpoint_block',
                        lambda *args: calls.append(1) or real(*args))
    model = dyt(with_cp=True)
    x = images(2)
    model(x)
    assert len(calls) == 3  # every block
    calls.clear()
    with torch.no_grad():
        model(x)
    model.eval()
    model(x)
    assert calls == []


def test_classifier_train_step_through_the_registry():
    """``with_cp=True`` in a config: DyTImageClassifier's two-pass ``train_step``
    (complete pass back-propagated first) updates the weights as without it."""
    results = []
    for with_cp in (False, True):
        backbone = tiny_backbone_cfg('DyTViT', adapter_cfg=dict(ADAPTER), with_cp=with_cp, **RANDOM)
        model = dyt_classifier(backbone=backbone)
        assert model.backbone.with_cp is with_cp
        torch.manual_seed(3)
        log = model.train_step(labelled_batch(), sgd(model))
        results.append((log, dict(model.named_parameters())))
    (log, params), (cp_log, cp_params) = results
    assert log.keys() == cp_log.keys() and 'loss_rate' in log
    for key in log:
        assert torch.equal(log[key], cp_log[key]), key
    for name, param in params.items():
        assert torch.equal(param, cp_params[name]), name


def test_with_cp_must_be_a_bool():
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        with pytest.raises(ValueError, match='with_cp'):
            MODELS.build(tiny_backbone_cfg('DyTViT', with_cp='yes'))
