"""DistillationImageClassifier: DeiT's distillation from a frozen teacher (the
loss of DeiT's losses.py, which TLEG trains its Aux-Net with, TLEG's
losses.py:36-63, written out here in plain torch), the teacher loaded by
``init_weights``, kept in eval mode and out of training, the predictions the
student's."""
import pytest
import torch
import torch.nn.functional as F
from mmengine.registry import DefaultScope
from mmpretrain.registry import MODELS

from helpers.classifiers import NUM_CLASSES, labelled_batch, sgd
from helpers.models import TINY_ARCH, tiny_backbone_cfg

SMOOTHING = 0.1


def classifier_cfg(**kwargs) -> dict:
    """A tiny student, and a tiny teacher with dropout (what eval mode turns off)."""
    head = dict(type='LinearClsHead', num_classes=NUM_CLASSES, in_channels=TINY_ARCH['embed_dims'])
    cfg = dict(
        type='DistillationImageClassifier',
        data_preprocessor=dict(type='ClsDataPreprocessor', mean=[127.5] * 3, std=[64.] * 3),
        backbone=tiny_backbone_cfg(out_type='avg_featmap'),
        head=dict(
            head, loss=dict(type='LabelSmoothLoss', label_smooth_val=SMOOTHING, mode='original')),
        teacher=dict(
            type='ImageClassifier',
            backbone=tiny_backbone_cfg(drop_rate=0.5),
            head=dict(head, num_classes=NUM_CLASSES)))
    cfg.update(kwargs)
    return cfg


def build(**kwargs):
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(classifier_cfg(**kwargs))
    model.init_weights()
    return model.train()


def batch(model):
    data = model.data_preprocessor(labelled_batch(), True)
    return data['inputs'], data['data_samples']


def by_hand(model, inputs, data_samples):
    """Student logits, the teacher's (in eval mode) and the smoothed labels."""
    with torch.no_grad():
        student = model.head(model.extract_feat(inputs))
        teacher = model.teacher.eval()(inputs, mode='tensor')
    labels = torch.stack([s.gt_label for s in data_samples]).view(-1)
    smooth = F.one_hot(labels, NUM_CLASSES) * (1 - SMOOTHING) + SMOOTHING / NUM_CLASSES
    return student, teacher, smooth


@pytest.mark.parametrize('alpha,tau', [(0.5, 1.0), (1.0, 1.0), (0.3, 2.5)])
def test_soft_distillation_is_deits(alpha, tau):
    model = build(alpha=alpha, tau=tau)
    inputs, data_samples = batch(model)
    with torch.no_grad():
        losses = model.loss(inputs, data_samples)
    student, teacher, smooth = by_hand(model, inputs, data_samples)
    ce = -(smooth * student.log_softmax(-1)).sum(-1).mean()
    # KL(softmax(z_t / tau) || softmax(z / tau)) summed over the batch and the
    # classes, times tau^2, over the number of logits.
    p_t = (teacher / tau).softmax(-1)
    kl = (p_t * ((teacher / tau).log_softmax(-1) - (student / tau).log_softmax(-1))).sum()
    torch.testing.assert_close(losses['loss_cls'], (1 - alpha) * ce)
    torch.testing.assert_close(losses['loss_distill'], alpha * kl * tau**2 / student.numel())


def test_hard_distillation_is_deits():
    model = build(distillation_type='hard', alpha=0.5)
    inputs, data_samples = batch(model)
    with torch.no_grad():
        losses = model.loss(inputs, data_samples)
    student, teacher, _ = by_hand(model, inputs, data_samples)
    expected = -student.log_softmax(-1).gather(1, teacher.argmax(-1, keepdim=True)).mean()
    torch.testing.assert_close(losses['loss_distill'], 0.5 * expected)


def test_the_teacher_stays_frozen_in_eval_mode_and_the_student_trains():
    model = build(alpha=1.0)
    assert not any(m.training for m in model.teacher.modules())
    assert all(m.training for m in model.backbone.modules())
    teacher = {k: v.clone() for k, v in model.teacher.state_dict().items()}
    student = model.head.fc.weight.detach().clone()
    model.train_step(labelled_batch(), sgd(model))
    assert all(p.grad is None and not p.requires_grad for p in model.teacher.parameters())
    assert all(torch.equal(v, teacher[k]) for k, v in model.teacher.state_dict().items())
    assert not torch.equal(model.head.fc.weight, student)
    # Predictions are the student's.
    model.eval()
    inputs, _ = batch(model)
    with torch.no_grad():
        torch.testing.assert_close(
            model(inputs, mode='tensor'), model.head(model.extract_feat(inputs)))


def test_init_weights_loads_the_teachers_checkpoint(tmp_path):
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        torch.manual_seed(7)
        trained = MODELS.build(classifier_cfg()['teacher'])
    torch.save(dict(state_dict=trained.state_dict()), tmp_path / 'teacher.pth')
    cfg = classifier_cfg()['teacher']
    cfg['init_cfg'] = dict(type='Pretrained', checkpoint=str(tmp_path / 'teacher.pth'))
    model = build(teacher=cfg)
    for key, value in trained.state_dict().items():
        assert torch.equal(model.teacher.state_dict()[key], value), key


@pytest.mark.parametrize('kwargs,match', [
    (dict(distillation_type='medium'), r"distillation_type='medium' is not one of \('soft', "
     r"'hard'\)"),
    (dict(alpha=1.5), r'alpha=1.5 must be a finite number in \[0, 1\]'),
    (dict(tau=0.0), r'tau=0.0 must be a finite number > 0'),
])
def test_settings_are_checked(kwargs, match):
    with pytest.raises(ValueError, match=match):
        build(**kwargs)


def test_the_teacher_must_predict_the_students_classes():
    teacher = classifier_cfg()['teacher']
    teacher['head']['num_classes'] = NUM_CLASSES + 1
    with pytest.raises(
            ValueError,
            match=rf'the teacher predicts {NUM_CLASSES + 1} classes, the student\'s head '
            rf'{NUM_CLASSES}'):
        build(teacher=teacher)
