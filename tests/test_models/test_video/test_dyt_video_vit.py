"""The DyT video model (DyTVideoViT + AttentivePoolingHead) equals the public
DyT video model (NUS-HPC-AI-Lab/Dynamic-Tuning,
video_models/video_vision_transformer_IN21K.py and its training step in
engine_finetune.py), written out below in plain torch from that code's
structure, on identical random weights: logits, token masks, training loss
and gradients."""
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F
from mmengine.logging import MessageHub
from mmengine.registry import MODELS

from helpers.dyt import dyt_param_names, trainable_names
from helpers.models import IMG_SIZE, PATCH_SIZE, TINY_ARCH, tiny_backbone_cfg
from mmvitdyn.engine import DispatchRateHook, GumbelTemperatureHook
from mmvitdyn.models import DyTVideoViT, TokenDispatcher

C, LAYERS, HEADS = TINY_ARCH['embed_dims'], TINY_ARCH['num_layers'], TINY_ARCH['num_heads']
CLASSES, FRAMES = 5, 2
TOKENS = 1 + (IMG_SIZE // PATCH_SIZE)**2
# The public scripts' settings (main_video.py, models/dynamic_adapter.py): Gumbel
# temperature, adapter scale and dropout, LayerNorm eps, target rate, rate-loss weight.
TAU, SCALE, ADAPTER_DROPOUT, EPS, TARGET, RATE_WEIGHT = 5.0, 0.1, 0.1, 1e-6, 0.5, 2.0


def build(**vit_kwargs):
    """The video backbone and head from their configs, every parameter random
    (adapters, gates and query too, so that each part shows in the outputs)."""
    torch.manual_seed(0)
    backbone = MODELS.build(dict(type='DyTVideoViT', vit=tiny_backbone_cfg('DyTViT', **vit_kwargs)))
    head = MODELS.build(
        dict(type='AttentivePoolingHead', num_classes=CLASSES, in_channels=C, num_heads=HEADS))
    backbone.attach_objective('this test, which adds its own loss terms')
    with torch.no_grad():
        for name, param in [*backbone.named_parameters(), *head.named_parameters()]:
            norm_weight = 'norm' in name and name.endswith('weight')
            param.normal_(1.0 if norm_weight else 0.0, 0.2)
    return backbone, head


def weights(backbone, head) -> dict:
    """Leaf copies of every parameter, by name (``vit.*`` and ``head.*``)."""
    named = [*backbone.named_parameters(), *head.named_parameters(prefix='head')]
    return {n: p.detach().clone().requires_grad_(p.requires_grad) for n, p in named}


def clips(batch: int = 3, frames: int = FRAMES, seed: int = 1) -> torch.Tensor:
    return torch.randn(
        batch, 3, frames, IMG_SIZE, IMG_SIZE, generator=torch.Generator().manual_seed(seed))


def ln(x, w, name):
    return F.layer_norm(x, x.shape[-1:], w[f'{name}.weight'], w[f'{name}.bias'], EPS)


def linear(x, w, name, bias=True):
    return F.linear(x, w[f'{name}.weight'], w[f'{name}.bias'] if bias else None)


def heads(x):
    """(B, N, C) -> (B, H, N, C / H)."""
    return x.reshape(x.shape[0], x.shape[1], HEADS, -1).transpose(1, 2)


def attend(q, k, v):
    scores = (q * q.shape[-1]**-0.5) @ k.transpose(-2, -1)
    out = scores.softmax(-1) @ v
    return out.transpose(1, 2).reshape(q.shape[0], q.shape[2], -1)


def token_select(logits, training):
    """TokenSelect's mask of the patch tokens from its logits (B, N - 1, 1), straight-through."""
    if training:  # Gumbel-Sigmoid: g1 - g2 of two Gumbel(0, 1) is Logistic(0, 1)
        u = torch.rand_like(logits).clamp_(1e-6, 1 - 1e-6)
        soft = torch.sigmoid((logits + u.log() - (-u).log1p()) / TAU)
    else:
        soft = logits.sigmoid()
    return (soft > 0.5).float() - soft.detach() + soft


def reference(w, x, training=False, complete=False):
    """The public model: frames "b c t h w -> (b t) c h w" through the ViT; per
    block ``x + Attn(LN1(x))``, then a TokenSelect on the patch tokens (class
    token set to 1), the adapter on every token and
    ``x + select * MLP(LN2(x)) + adapter``; final norm; all tokens of all
    frames "(b t) n c -> b (t n) c"; the query token cross-attends to them
    (LN on q, k and v; q and v biased; no residual, no MLP); the linear head.
    The complete model (``complete_model=True``) leaves the masks out (the
    public code draws them and discards them). Returns the logits and the
    patch-token masks (B*T, layers, N - 1)."""
    b, _, t = x.shape[:3]
    x = x.transpose(1, 2).flatten(0, 1)
    x = F.conv2d(
        x, w['vit.patch_embed.proj.weight'], w['vit.patch_embed.proj.bias'],
        stride=PATCH_SIZE).flatten(2).transpose(1, 2)
    x = torch.cat([w['vit.cls_token'].expand(x.shape[0], -1, -1), x], dim=1) + w['vit.pos_embed']
    masks = []
    for i in range(LAYERS):
        p = f'vit.blocks.{i}.'
        qkv = linear(ln(x, w, p + 'norm1'), w, p + 'attn.qkv').chunk(3, dim=-1)
        x = x + linear(attend(*map(heads, qkv)), w, p + 'attn.proj')
        mlp = linear(F.gelu(linear(ln(x, w, p + 'norm2'), w, p + 'mlp.fc1')), w, p + 'mlp.fc2')
        if not complete:
            select = token_select(linear(x[:, 1:], w, p + 'dispatchers.mlp.gate'), training)
            masks.append(select[..., 0])
            mlp = torch.cat([select.new_ones(select.shape[0], 1, 1), select], dim=1) * mlp
        hidden = F.dropout(F.relu(linear(x, w, p + 'adapter.down')), ADAPTER_DROPOUT, training)
        x = x + mlp + linear(hidden, w, p + 'adapter.up') * SCALE
    x = ln(x, w, 'vit.norm').reshape(b, t * x.shape[1], C)
    query = w['head.pool.query'].expand(b, -1, -1)
    q = linear(ln(query, w, 'head.pool.norm_q'), w, 'head.pool.q')
    k = linear(ln(x, w, 'head.pool.norm_k'), w, 'head.pool.k', bias=False)
    v = linear(ln(x, w, 'head.pool.norm_v'), w, 'head.pool.v')
    pooled = linear(attend(heads(q), heads(k), heads(v)), w, 'head.pool.proj')[:, 0]
    return linear(pooled, w, 'head.fc_cls'), torch.stack(masks, dim=1) if masks else None


def frame_masks(backbone) -> torch.Tensor:
    """The last forward's MLP masks, (B*T, layers, N - 1)."""
    return torch.stack([m['mlp'] for m in backbone.dispatch_masks()], dim=1)


def public_loss(logits, masks, complete, labels):
    """The training loss of engine_finetune.train_video_one_epoch with AdaLoss
    (token_ratio 2, target 0.5): CE + 2 (mean mask - 0.5)^2 + CE of the
    complete model + KL(complete || dynamic), complete detached in the KL."""
    kl = F.kl_div(
        F.log_softmax(logits, -1),
        F.log_softmax(complete.detach(), -1),
        reduction='batchmean',
        log_target=True)
    return (F.cross_entropy(logits, labels) + RATE_WEIGHT * (masks.mean() - TARGET)**2 +
            F.cross_entropy(complete, labels) + kl)


@pytest.mark.parametrize('packed', [True, False])
def test_evaluation_equals_the_public_model(packed):
    backbone, head = build()
    backbone.eval().set_packed(packed)
    head.eval()
    x = clips()
    with torch.no_grad():
        logits = head(backbone(x))
        expected, expected_masks = reference(weights(backbone, head), x)
        torch.testing.assert_close(logits, expected, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(frame_masks(backbone), expected_masks, rtol=0, atol=0)
        assert 0.2 < expected_masks.mean() < 0.8
        with backbone.complete_mode():
            complete = head(backbone(x))
        expected_complete, _ = reference(weights(backbone, head), x, complete=True)
        torch.testing.assert_close(complete, expected_complete, atol=1e-5, rtol=1e-5)


def test_training_loss_and_gradients_equal_the_public_model():
    """Same seed, same noise and dropout draws: the Gumbel noise (one
    Logistic(0, 1) draw per token) and the adapter dropout in block order."""
    backbone, head = build()
    backbone.train()
    head.train()
    x, labels = clips(), torch.tensor([0, 3, 1])
    w = weights(backbone, head)

    torch.manual_seed(7)
    logits = head(backbone(x))
    masks = frame_masks(backbone)
    rate_loss = backbone.rate_loss()
    torch.manual_seed(8)
    with backbone.complete_mode():
        complete = head(backbone(x))
    loss = public_loss(logits, masks, complete, labels)
    loss.backward()

    torch.manual_seed(7)
    expected, expected_masks = reference(w, x, training=True)
    torch.manual_seed(8)
    expected_complete, _ = reference(w, x, training=True, complete=True)
    expected_loss = public_loss(expected, expected_masks, expected_complete, labels)
    expected_loss.backward()

    torch.testing.assert_close(logits, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(masks, expected_masks, rtol=0, atol=0)
    assert 0.2 < masks.mean() < 0.8 and set(masks.detach().unique().tolist()) == {0.0, 1.0}
    torch.testing.assert_close(rate_loss, (expected_masks.mean() - TARGET)**2)
    torch.testing.assert_close(loss, expected_loss, atol=1e-5, rtol=1e-5)
    params = dict([*backbone.named_parameters(), *head.named_parameters(prefix='head')])
    for name, param in params.items():
        if param.requires_grad:
            torch.testing.assert_close(param.grad, w[name].grad, atol=1e-5, rtol=1e-4)


def test_gradients_reach_exactly_the_adapters_dispatchers_pooling_and_head():
    backbone, head = build()
    backbone.train()
    head.train()
    expected = dyt_param_names(
        LAYERS, prefix='vit.') | {f'head.{n}'
                                  for n, _ in head.named_parameters()}
    assert trainable_names(backbone) | {f'head.{n}' for n in trainable_names(head)} == expected
    logits = head(backbone(clips()))
    (F.cross_entropy(logits, torch.tensor([0, 3, 1])) + backbone.rate_loss()).backward()
    for name, param in [*backbone.named_parameters(), *head.named_parameters(prefix='head')]:
        if name in expected:
            assert param.grad is not None and param.grad.abs().sum() > 0, name
        else:
            assert param.grad is None, name


def test_the_protocol_is_the_frame_vit_s_over_all_frames():
    backbone, _ = build()
    backbone.eval()
    x = clips()
    with torch.no_grad():
        backbone(x)
    masks = frame_masks(backbone)
    assert masks.shape == (3 * FRAMES, LAYERS, TOKENS - 1)
    rates = backbone.activation_rates()
    assert rates['act_rate'] == pytest.approx(masks.mean().item())
    for i in range(LAYERS):
        assert rates[f'act_rate/{i}.mlp'] == pytest.approx(masks[:, i].mean().item())
    frame_rates = masks.mean(dim=(1, 2))
    assert frame_rates.max() - frame_rates.min() > 0.05  # frames are dispatched apart
    torch.testing.assert_close(backbone.rate_loss(), (masks.mean() - TARGET)**2)
    assert backbone.needs_objective()
    backbone.set_packed(False)
    assert not any(block.packed for block in backbone.vit.dyt_blocks())
    with backbone.complete_mode() as inside:
        assert inside is backbone
        assert all(block.complete for block in backbone.vit.dyt_blocks())
    assert not any(block.complete for block in backbone.vit.dyt_blocks())
    adaptformer, _ = build(dispatch=None)
    assert not adaptformer.needs_objective()
    with torch.no_grad():
        adaptformer(x)
    assert adaptformer.activation_rates() == {} and adaptformer.rate_loss().item() == 0.0


def test_the_rate_and_temperature_hooks_reach_the_frame_vit():
    """DispatchRateHook weights each forward's rates by its clips; the
    temperature schedule reaches every dispatcher."""
    backbone, _ = build()
    hub = MessageHub.get_instance('test_dyt_video_vit')
    runner = SimpleNamespace(model=SimpleNamespace(backbone=backbone.eval()), message_hub=hub)
    hook = DispatchRateHook()
    hook.before_test_epoch(runner)
    rates = []
    with torch.no_grad():
        for batch in (3, 1):
            backbone(clips(batch, seed=batch))
            rates.append((backbone.activation_rates()['act_rate'], batch))
    hook.after_test_epoch(runner)
    assert rates[0][0] != rates[1][0]
    expected = sum(rate * batch for rate, batch in rates) / 4
    assert hub.get_scalar('test/act_rate').current() == pytest.approx(expected)
    runner = SimpleNamespace(model=backbone, iter=10, max_iters=11, message_hub=hub)
    GumbelTemperatureHook(start=5.0, end=1.0).before_train_iter(runner, 0)
    taus = [m.tau for m in backbone.modules() if isinstance(m, TokenDispatcher)]
    assert len(taus) == LAYERS and all(tau == pytest.approx(1.0) for tau in taus)


def test_training_without_an_objective_is_refused_with_the_video_model_named():
    backbone = MODELS.build(dict(type='DyTVideoViT', vit=tiny_backbone_cfg('DyTViT'))).train()
    with pytest.raises(RuntimeError, match='DyTVideoViT is training without .*DyTRecognizer3D'):
        backbone(clips())
    backbone.attach_objective('this test')
    assert backbone.vit.objective == 'this test'
    backbone(clips())


def test_frames_of_a_clip_are_consecutive_and_their_tokens_joined_frame_after_frame():
    x = clips(batch=2, frames=3)
    frames = DyTVideoViT.clip_frames(x)
    for b in range(2):
        for t in range(3):
            torch.testing.assert_close(frames[b * 3 + t], x[b, :, t], rtol=0, atol=0)
    backbone, _ = build()
    backbone.eval()
    with torch.no_grad():
        tokens = backbone(x)
        per_frame = backbone.vit(frames)[0]
    assert tokens.shape == (2, 3 * TOKENS, C)
    torch.testing.assert_close(tokens, per_frame.reshape(2, 3 * TOKENS, C), rtol=0, atol=0)


def test_the_scores_do_not_depend_on_the_order_of_the_frames():
    """No temporal embedding and a pooling over the set of tokens: the public
    design sees a clip as a bag of frames."""
    backbone, head = build()
    backbone.eval()
    head.eval()
    x = clips(frames=3)
    with torch.no_grad():
        torch.testing.assert_close(head(backbone(x.flip(2))), head(backbone(x)))


def test_the_head_starts_as_mean_pooling_with_the_public_initialisation():
    torch.manual_seed(0)
    head = MODELS.build(
        dict(type='AttentivePoolingHead', num_classes=CLASSES, in_channels=C, num_heads=HEADS))
    head.init_weights()
    pool = head.pool
    assert pool.query.abs().max() == 0 and pool.k.bias is None
    for linear_ in (pool.q, pool.v, pool.proj):
        assert linear_.bias.abs().max() == 0
    assert head.fc_cls.bias.abs().max() == 0
    assert 0.005 < head.fc_cls.weight.std() < 0.015 and 0.01 < pool.q.weight.std() < 0.03
    tokens = torch.randn(2, 3 * TOKENS, C)
    expected = pool.proj(pool.v(pool.norm_v(tokens)).mean(dim=1))
    torch.testing.assert_close(head.eval().pre_logits(tokens), expected)


@pytest.mark.parametrize('vit, message', [
    (dict(out_type='cls_token'), "out_type='raw'"),
    (dict(out_indices=[0, 2]), 'out_indices=-1'),
])
def test_a_vit_whose_output_cannot_be_joined_is_refused(vit, message):
    cfg = tiny_backbone_cfg(vit.pop('type', 'DyTViT'), **vit)
    with pytest.raises(ValueError, match=message):
        MODELS.build(dict(type='DyTVideoViT', vit=cfg))


def test_a_frame_backbone_that_is_no_vit_is_refused():
    with pytest.raises(ValueError, match="vit.type='GELU' is not a ViT"):
        MODELS.build(dict(type='DyTVideoViT', vit=dict(type='GELU')))


def test_plain_vit_frames_are_the_vit_on_each_frame_with_the_dense_protocol():
    torch.manual_seed(0)
    backbone = MODELS.build(dict(type='DyTVideoViT', vit=tiny_backbone_cfg('ViT')))
    clips = torch.randn(2, 3, 3, IMG_SIZE, IMG_SIZE)
    frames = clips.permute(0, 2, 1, 3, 4).reshape(6, 3, IMG_SIZE, IMG_SIZE)
    expected = backbone.vit(frames)[0].reshape(2, -1, C)
    backbone.train()
    assert not backbone.needs_objective()
    with backbone.complete_mode():
        tokens = backbone.eval()(clips)
    torch.testing.assert_close(tokens, expected, rtol=0, atol=0)
    assert backbone.dispatch_masks() == [] and backbone.activation_rates() == {}
    assert backbone.rate_loss().item() == 0.0


def test_images_instead_of_clips_are_refused_with_the_shape():
    backbone, _ = build()
    with pytest.raises(ValueError, match=r'takes clips \(B, C, T, H, W\), got .*\(2, 3, 32, 32\)'):
        backbone.eval()(torch.zeros(2, 3, IMG_SIZE, IMG_SIZE))
