"""DynamicViT on a frozen AdaptFormer ViT: token counts, paths, gradients, losses."""
import copy

import pytest
import torch
import torch.nn.functional as F
from mmengine.registry import DefaultScope
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from helpers.configs import DYT_CONFIG_DIR, RANDOM_FROZEN, dyt_config
from helpers.models import IMG_SIZE, PATCH_SIZE, TINY_ARCH, images, tiny, tiny_backbone_cfg
from helpers.tools import run_tool
from mmvitdyn.analysis.static_flops import flop_analyzer
from mmvitdyn.models import DynamicViT, TokenPredictor

DIGITS_CFG = DYT_CONFIG_DIR / 'vit-mini-p4-adaptformer-dynamicvit_1xb32-8e_digits-32px.py'
ADAPTER = dict(bottleneck=8, scale=1.0, dropout=0.0)
# Four blocks so that each of three stages has a block after it: predictors
# before blocks 1, 2, 3 keep int(16 * 0.7^k) of the 16 patch tokens:
# 11.2 -> 11, 7.84 -> 7, 5.488 -> 5.
FOUR = dict(arch=dict(TINY_ARCH, num_layers=4), prune_loc=(1, 2, 3), adapter_cfg=ADAPTER)
KEPT = [11, 7, 5]


def dynamicvit(**kwargs):
    model = tiny(DynamicViT, **{**FOUR, **kwargs})
    for block in model.blocks:  # non-zero adapters so every path carries signal
        torch.nn.init.normal_(block.adapter.up.weight, std=0.1)
    return model


def block_input_lengths(model, x):
    lengths = []
    hooks = [
        b.register_forward_pre_hook(lambda m, args: lengths.append(args[0].shape[1]))
        for b in model.blocks
    ]
    model(x)
    for hook in hooks:
        hook.remove()
    return lengths


def test_inference_drops_tokens_to_the_paper_counts():
    model = dynamicvit()
    with torch.no_grad():
        assert block_input_lengths(model, images(3)) == [17] + [1 + k for k in KEPT]


def test_vit_b_schedule_196_137_96_67():
    """ViT-B/16 at 224 (196 patches), rho = 0.7, stages before blocks 3, 6, 9: the
    official int(196 * 0.7^k) gives 137, 96, 67 (137.2, 96.04, 67.228)."""
    model = tiny(
        DynamicViT,
        arch=dict(TINY_ARCH, num_layers=12),
        img_size=224,
        patch_size=16,
        adapter_cfg=ADAPTER)
    with torch.no_grad():
        lengths = block_input_lengths(model, images(1, size=224))
    assert lengths == [197] * 3 + [138] * 3 + [97] * 3 + [68] * 3


def test_flop_count_follows_the_reduced_shapes():
    """The FLOP trace (mmengine's FlopAnalyzer with the project's attention handle) sees
    the real shapes. Block with n tokens (C = 32, MLP 64, adapter 8): linears
    n * (3C^2 + C^2 + 2 * 2C^2 + 2 * 8C) = 8704 n, two LayerNorms 2 * 5nC = 320 n,
    attention matmuls 2 n^2 C = 64 n^2. Predictor on m patch tokens: LayerNorm 5mC,
    linears m * (C^2 + C^2 / 2 + C^2 / 8 + C / 2) = 1680 m."""
    model = dynamicvit()
    with torch.no_grad():
        flops = flop_analyzer(model, (images(1), )).by_module()
    assert [flops[f'blocks.{i}']
            for i in range(4)] == [9024 * n + 64 * n**2 for n in (17, 12, 8, 6)]
    assert [flops[f'predictors.{k}'] for k in range(3)] == [1840 * m for m in (16, 11, 7)]


def test_training_masks_are_nested_hard_decisions_on_a_fixed_length():
    model = dynamicvit().train()
    model.attach_objective('this test, which adds its own loss terms')
    torch.manual_seed(0)
    lengths = block_input_lengths(model, images(4))
    assert lengths == [17] * 4
    previous = torch.ones(4, 16)
    for decision in model.decisions:
        assert set(decision.unique().tolist()) <= {0.0, 1.0}
        assert bool((decision <= previous).all())  # a dropped token stays dropped
        previous = decision
    # Gumbel noise: the counts vary per image (here from 16 candidates, first stage).
    assert len(set(model.decisions[0].sum(1).tolist())) > 1


def test_packed_inference_equals_per_image_hand_selection():
    """Reference: each image alone; at a stage the test scores the patch tokens with the
    predictor (global feature = plain mean over the remaining tokens), keeps the
    int(N rho^k) best in their order and runs the remaining blocks on them."""
    model = dynamicvit()
    x = images(3)
    with torch.no_grad():
        out = model(x)[0]
        for b in range(3):
            t, _ = model.embed(x[b:b + 1])
            for i, block in enumerate(model.blocks):
                if i in (1, 2, 3):
                    p = model.predictors[i - 1]
                    h = F.gelu(p.embed(F.layer_norm(t[:, 1:], (32, ), p.norm.weight, p.norm.bias)))
                    feat = torch.cat(
                        [h[..., :16], h[..., 16:].mean(1, keepdim=True).expand(-1, h.shape[1], -1)],
                        -1)
                    keep_score = p.mlp(feat).log_softmax(-1)[0, :, 0]
                    order = sorted(range(len(keep_score)), key=lambda n: -float(keep_score[n]))
                    kept = sorted(order[:KEPT[i - 1]])
                    t = torch.cat([t[:, :1], t[:, 1:][:, kept]], 1)
                t = block(t)
            torch.testing.assert_close(out[b], model.norm(t)[0, 0], atol=1e-5, rtol=1e-5)


def test_masked_path_in_eval_equals_packed():
    """The same selections as masks on the full sequence (policy attention): same class token."""
    model = dynamicvit()
    x = images(4)
    with torch.no_grad():
        packed = model(x)[0]
        model.set_packed(False)
        masked = model(x)[0]
    assert [d.sum(1).tolist() for d in model.decisions] == [[k] * 4 for k in KEPT]
    torch.testing.assert_close(masked, packed, atol=1e-5, rtol=1e-5)


def test_predictor_uses_the_mean_over_kept_tokens():
    torch.manual_seed(0)
    predictor = TokenPredictor(16)
    x = torch.randn(2, 5, 16)
    keep = torch.tensor([[1., 0, 1, 1, 0], [1, 1, 1, 1, 1]])
    out = predictor(x, keep)
    h = F.gelu(predictor.embed(F.layer_norm(x, (16, ))))
    glob = torch.stack([h[0, [0, 2, 3], 8:].mean(0), h[1, :, 8:].mean(0)])[:, None]
    ref = predictor.mlp(torch.cat([h[..., :8], glob.expand(-1, 5, -1)], -1)).log_softmax(-1)
    torch.testing.assert_close(out, ref)


def build_classifier(**kwargs):
    cfg = dict(
        type='DynamicViTClassifier',
        data_preprocessor=dict(type='ClsDataPreprocessor', mean=[127.5] * 3, std=[64.] * 3),
        backbone=tiny_backbone_cfg('DynamicViT', **FOUR),
        head=dict(type='LinearClsHead', num_classes=3, in_channels=TINY_ARCH['embed_dims']))
    cfg.update(kwargs)
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg)
    model.init_weights()
    for block in model.backbone.blocks:
        torch.nn.init.normal_(block.adapter.up.weight, std=0.1)
    for predictor in model.backbone.predictors:  # decisive scores: far from 50/50 keeps
        torch.nn.init.normal_(predictor.mlp[-1].weight, std=1.0)
    return model.train()


def batch(n=6):
    g = torch.Generator().manual_seed(3)
    inputs = [
        torch.randint(0, 256, (3, IMG_SIZE, IMG_SIZE), generator=g, dtype=torch.uint8)
        for _ in range(n)
    ]
    return dict(inputs=inputs, data_samples=[DataSample().set_gt_label(i % 3) for i in range(n)])


def test_losses_equal_hand_computation():
    """loss_cls = CE(z, y); loss_ratio = 2 * mean_k mean_b (mean_n D_k - 0.7^k)^2;
    loss_distill_cls = 0.5 * KL(softmax(z_t) || softmax(z)); loss_distill_token =
    0.5 * MSE of the kept final patch tokens to the teacher's (complete pass)."""
    model = build_classifier()
    logits, tokens = [], []
    model.head.register_forward_hook(lambda m, a, out: logits.append(out))
    model.backbone.norm.register_forward_hook(lambda m, a, out: tokens.append(out[:, 1:]))
    data = model.data_preprocessor(batch(), True)
    torch.manual_seed(4)
    losses = model.loss(data['inputs'], data['data_samples'])
    (z_t, z), (t_t, t) = logits, tokens  # teacher (complete) pass first
    labels = torch.tensor([i % 3 for i in range(6)])
    decisions = model.backbone.decisions
    ratio = sum(((d.mean(1) - 0.7**(k + 1))**2).mean() for k, d in enumerate(decisions)) / 3
    log_p, log_q = z_t.log_softmax(-1), z.log_softmax(-1)
    kept = decisions[-1] > 0.5
    assert 0 < int(kept.sum()) < kept.numel()
    expected = {
        'loss_cls': F.cross_entropy(z, labels),
        'loss_ratio': 2 * ratio,
        'loss_distill_cls': 0.5 * (log_p.exp() * (log_p - log_q)).sum(-1).mean(),
        'loss_distill_token': 0.5 * ((t - t_t)**2)[kept].mean(),
    }
    for name, value in expected.items():
        torch.testing.assert_close(losses[name], value)
        assert value.item() > 0
    assert not any(k.startswith('loss') and k not in expected for k in losses)


def test_kl_token_distillation():
    model = build_classifier(token_distill='kl', rate_loss_weight=0.0)
    tokens = []
    model.backbone.norm.register_forward_hook(lambda m, a, out: tokens.append(out[:, 1:]))
    data = model.data_preprocessor(batch(), True)
    losses = model.loss(data['inputs'], data['data_samples'])
    kept = model.backbone.decisions[-1] > 0.5
    log_p, log_q = tokens[0][kept].log_softmax(-1), tokens[1][kept].log_softmax(-1)
    kl = (log_p.exp() * (log_p - log_q)).sum(-1).mean()
    torch.testing.assert_close(losses['loss_distill_token'], 0.5 * kl)
    assert 'loss_ratio' not in losses


def test_gradients_reach_exactly_adapters_predictors_and_head():
    model = build_classifier()
    names = {n for n, p in model.named_parameters() if p.requires_grad}
    adapters = {
        f'backbone.blocks.{i}.adapter.{lin}.{t}'
        for i in range(4)
        for lin in ('down', 'up')
        for t in ('weight', 'bias')
    }
    predictors = {
        f'backbone.{n}'
        for n, _ in model.backbone.predictors.named_parameters(prefix='predictors')
    }
    assert len(predictors) == 3 * 10
    assert names == adapters | predictors | {'head.fc.weight', 'head.fc.bias'}
    data = model.data_preprocessor(batch(), True)
    losses = model.loss(data['inputs'], data['data_samples'])
    sum(v for k, v in losses.items() if k.startswith('loss')).backward()
    for name, param in model.named_parameters():
        if name in names:
            assert param.grad is not None and float(param.grad.abs().sum()) > 0, name
        else:
            assert param.grad is None, name


@pytest.mark.parametrize('kwargs,error,message', [
    (dict(dispatch='mlp'), TypeError, r"has no token dispatch: \['dispatch'\] are DyTViT's"),
    (dict(target_rate=0.5), TypeError, r"\['target_rate'\] are DyTViT's arguments"),
    (dict(token_reduction=dict(type='ToMe')), ValueError, 'DynamicViT prunes tokens itself'),
    (dict(keep_rate=0.6), TypeError, 'is called base_rate .*: write base_rate=0.6'),
])
def test_dyt_settings_and_the_old_rate_name_are_refused(kwargs, error, message):
    """DynamicViT is an AdaptFormer ViT, not a DyT one: DyT's settings and a second
    token reduction are refused, and rho's old name names the new one."""
    with pytest.raises(error, match=message):
        tiny(DynamicViT, prune_loc=(1, ), **kwargs)


@pytest.mark.parametrize('kwargs,message', [
    (dict(base_rate=1.0), r'base_rate=1.0 must be a finite number in \(0, 1\)'),
    (dict(prune_loc=(2, 1)), r'prune_loc=\(2, 1\) must be increasing block indices in 1..2'),
    (dict(prune_loc=(0, )), r'prune_loc=\(0,\) must be'),
    (dict(out_type='featmap'), "out_type='featmap' is not supported; choose one of"),
    (dict(out_indices=(0, 2)), r'out_indices=\(0, 2\): DynamicViT returns the last block'),
])
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tiny(DynamicViT, **{'prune_loc': (1, 2), **kwargs})


def test_classifier_needs_a_dynamicvit():
    with pytest.raises(TypeError, match='needs a DynamicViT backbone, got DyTViT'):
        build_classifier(backbone=tiny_backbone_cfg('DyTViT'))
    with pytest.raises(ValueError, match=r"token_distill='l1' is not one of \('mse', 'kl'\)"):
        build_classifier(token_distill='l1')


def test_one_training_iteration_through_train_py(data_workspace, tmp_path):
    """The digits AdaptFormer + DynamicViT config trains (two epochs of one batch:
    the schedule needs two) and logs every loss term; the checkpoint has predictors."""
    proc = run_tool([
        'train.py', DIGITS_CFG, '--work-dir', tmp_path, '--cfg-options', 'train_cfg.max_epochs=2',
        'train_cfg.val_interval=100', 'train_dataloader.batch_size=8',
        'train_dataloader.dataset.indices=8', 'default_hooks.logger.interval=1',
        'default_hooks.checkpoint.interval=1', RANDOM_FROZEN
    ], data_workspace)
    line = next(s for s in proc.stdout.splitlines() + proc.stderr.splitlines()
                if 'Epoch(train)' in s)
    for term in ('loss_cls', 'loss_ratio', 'loss_distill_cls', 'loss_distill_token', 'keep_rate/2'):
        assert f'{term}: ' in line
    state = torch.load(
        tmp_path / 'epoch_2.pth', map_location='cpu', weights_only=False)['state_dict']
    assert 'backbone.predictors.2.mlp.4.weight' in state


CONFIGS = {
    # config -> (its DyT base, adapter bottleneck)
    'vit-b-p16-adaptformer-dynamicvit_d64_8xb128-100e_cifar100-224px.py':
    ('vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py', 64),
    'vit-b-p16-adaptformer-dynamicvit_d8_1xb64-100e_vtab1k-224px.py':
    ('vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py', 8),
}


@pytest.mark.parametrize('name', sorted(CONFIGS))
def test_configs_change_only_the_method(name, tmp_path):
    """The paper's DynamicViT settings on the DyT recipe; with a tiny ViT the config
    builds, loads a plain ViT checkpoint (predictors and adapters new) and trains."""
    base_name, bottleneck = CONFIGS[name]
    cfg, base = copy.deepcopy(dyt_config(name)), dyt_config(base_name)
    for key in ('optim_wrapper', 'param_scheduler', 'train_cfg', 'train_dataloader',
                'data_preprocessor'):
        assert cfg[key] == base[key], key
    backbone = cfg.model.backbone
    assert backbone.adapter_cfg.bottleneck == bottleneck and backbone.freeze_pretrained
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        paper = MODELS.build(cfg.model)  # ViT-B as configured, not initialised
    assert (type(paper.backbone), paper.backbone.prune_loc, paper.backbone.base_rate,
            paper.backbone.gumbel_tau) == (DynamicViT, (3, 6, 9), 0.7, 1.0)
    assert (type(paper).__name__, paper.rate_loss_weight, paper.distill_loss, paper.distill_weight,
            paper.token_distill, paper.complete_loss) == ('DynamicViTClassifier', 2.0, True, 0.5,
                                                          'mse', False)
    checkpoint = tmp_path / 'vit.pth'
    torch.save(tiny().state_dict(), checkpoint)
    backbone.update(arch=TINY_ARCH, img_size=IMG_SIZE, patch_size=PATCH_SIZE, prune_loc=(1, 2))
    backbone.init_cfg.checkpoint = str(checkpoint)
    cfg.model.head.in_channels = TINY_ARCH['embed_dims']
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg.model)
    model.init_weights()
    torch.testing.assert_close(model.backbone.blocks[2].mlp.fc1.weight,
                               tiny().blocks[2].mlp.fc1.weight)
    losses = model.loss(images(2), [DataSample().set_gt_label(i) for i in range(2)])
    assert {'loss_cls', 'loss_ratio', 'loss_distill_cls', 'loss_distill_token'} <= set(losses)
    assert all(torch.isfinite(v) for v in losses.values())


def test_a_config_with_the_old_rate_name_names_the_new_one():
    """A config (or a checkpoint's stored config) written before rho was renamed."""
    cfg = tiny_backbone_cfg('DynamicViT', prune_loc=(1, ), keep_rate=0.5)
    with pytest.raises(TypeError, match="keep_rate=0.5 is called base_rate.*write base_rate=0.5"):
        MODELS.build(cfg)
