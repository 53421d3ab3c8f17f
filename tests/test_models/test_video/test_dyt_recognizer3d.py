"""DyTRecognizer3D: mmaction2's Recognizer3D with DyT's objective on clips, and
AttentivePoolingHead as an mmaction2 head; a stock Recognizer3D with a DyT
video backbone is refused in training."""
import pytest
import torch
import torch.nn.functional as F
from mmaction.structures import ActionDataSample
from mmengine.optim import OptimWrapper
from mmengine.registry import MODELS, DefaultScope

from helpers.models import IMG_SIZE, TINY_ARCH, tiny_backbone_cfg

CLASSES, FRAMES, BATCH = 3, 2, 4


def recognizer_cfg(model_type: str = 'DyTRecognizer3D', **kwargs) -> dict:
    return dict(
        type=model_type,
        backbone=dict(type='DyTVideoViT', vit=tiny_backbone_cfg('DyTViT')),
        cls_head=dict(
            type='AttentivePoolingHead',
            num_classes=CLASSES,
            in_channels=TINY_ARCH['embed_dims'],
            num_heads=TINY_ARCH['num_heads'],
            topk=(1, )),
        data_preprocessor=dict(type='ActionDataPreprocessor', format_shape='NCTHW'),
        **kwargs)


def build(model_type: str = 'DyTRecognizer3D', **kwargs):
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('mmaction'):
        model = MODELS.build(recognizer_cfg(model_type, **kwargs))
    model.init_weights()
    with torch.no_grad():  # a head whose scores differ from clip to clip
        model.cls_head.fc_cls.weight.normal_(0, 1)
    return model


def batch(views: int = 1, seed: int = 1):
    """Clips (B, views, C, T, H, W) and their data samples."""
    g = torch.Generator().manual_seed(seed)
    clips = torch.randn(BATCH, views, 3, FRAMES, IMG_SIZE, IMG_SIZE, generator=g)
    labels = torch.arange(BATCH) % CLASSES
    samples = [ActionDataSample().set_gt_label(int(label)) for label in labels]
    return clips, samples, labels


def test_a_stock_recognizer3d_with_a_dyt_video_backbone_is_refused_in_training():
    model = build('Recognizer3D')
    clips, samples, _ = batch()
    with torch.no_grad():
        model.eval()(clips, samples, mode='predict')  # inference needs no objective
    with pytest.raises(RuntimeError, match='DyTVideoViT is training without .*DyTRecognizer3D'):
        model.train()(clips, samples, mode='loss')


def test_the_loss_is_dyt_s_objective_on_the_clip_scores():
    model = build().train()
    clips, samples, labels = batch()
    torch.manual_seed(5)
    losses = model.loss(clips, samples)
    torch.manual_seed(5)
    frames = clips.flatten(0, 1)
    with model.backbone.complete_mode():
        complete = model.cls_head(model.backbone(frames))
    dynamic = model.cls_head(model.backbone(frames))
    masks = [m for block in model.backbone.dispatch_masks() for m in block.values()]
    rate = torch.cat([m.flatten() for m in masks]).mean()
    expected = {
        'loss_cls_complete':
        F.cross_entropy(complete, labels),
        'loss_cls':
        F.cross_entropy(dynamic, labels),
        'loss_distill': (F.softmax(complete, -1) *
                         (F.log_softmax(complete, -1) - F.log_softmax(dynamic, -1))).sum(-1).mean(),
        'loss_rate':
        2 * (rate - 0.5)**2,
    }
    for key, value in expected.items():
        torch.testing.assert_close(losses[key], value, msg=key)
    assert 0 < float(losses['act_rate']) < 1


def test_the_two_pass_step_logs_every_term_and_trains_only_the_dyt_parameters():
    model = build().train()
    clips, samples, _ = batch()
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    optim = OptimWrapper(torch.optim.SGD([p for p in model.parameters() if p.requires_grad], 0.1))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    log = model.train_step(dict(inputs=list(clips), data_samples=samples), optim)
    assert {'loss', 'loss_cls', 'loss_cls_complete', 'loss_distill', 'loss_rate',
            'act_rate'} <= set(log)
    terms = ('loss_cls', 'loss_cls_complete', 'loss_distill', 'loss_rate')
    torch.testing.assert_close(log['loss'], sum(log[k] for k in terms))
    changed = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert changed and changed <= trainable
    assert any(n.startswith('cls_head.pool.') for n in changed)
    assert not any(n.startswith('backbone.vit.blocks.0.attn') for n in trainable)


def test_views_of_a_sample_are_averaged_as_scores():
    model = build().eval()
    clips, samples, _ = batch(views=2)
    with torch.no_grad():
        predicted = model(clips, samples, mode='predict')
        per_view = model.cls_head(model.backbone(clips.flatten(0, 1))).view(BATCH, 2, CLASSES)
    scores = torch.stack([s.pred_score for s in predicted])
    torch.testing.assert_close(scores, per_view.mean(1))
    assert [int(s.pred_label) for s in predicted] == per_view.mean(1).argmax(-1).tolist()
