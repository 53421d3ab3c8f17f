"""The consistency loss: a second dynamic pass tied to the first by a symmetric KL."""
import pytest
import torch
from mmengine.registry import DefaultScope
from mmpretrain.registry import MODELS

import mmvitdyn  # noqa: F401
from helpers.classifiers import NUM_CLASSES, labelled_batch, sgd
from helpers.models import TINY_ARCH, tiny_backbone_cfg
from mmvitdyn.models.dyt_two_pass import symmetric_kl


def fixed_logits(seed):
    gen = torch.Generator().manual_seed(seed)
    return (2 * torch.randn(5, 7, generator=gen)).requires_grad_()


def test_symmetric_kl_matches_plain_torch_value_and_gradients():
    """(KL(sg(q) || p) + KL(sg(p) || q)) / 2, batch mean, written out; its
    gradient is (p - q) / 2B for the first logits and (q - p) / 2B for the second."""
    a, b = fixed_logits(0), fixed_logits(1)
    loss = symmetric_kl(a, b)
    loss.backward()
    p, q = a.detach().softmax(-1), b.detach().softmax(-1)
    kl_qp = (q * (q.log() - p.log())).sum(-1).mean()
    kl_pq = (p * (p.log() - q.log())).sum(-1).mean()
    torch.testing.assert_close(loss, (kl_qp + kl_pq) / 2)
    assert abs(float(kl_qp - kl_pq)) > 0.05  # both directions, not one twice
    batch = a.shape[0]
    torch.testing.assert_close(a.grad, (p - q) / (2 * batch))
    torch.testing.assert_close(b.grad, (q - p) / (2 * batch))
    assert float(symmetric_kl(a, a).detach()) == pytest.approx(0, abs=1e-7)


def adamix_classifier(**kwargs):
    """A tiny DyTImageClassifier with AdaMix adapters (3 experts) whose
    experts differ, so two training passes differ, and a head whose logits do."""
    cfg = dict(
        type='DyTImageClassifier',
        data_preprocessor=dict(type='ClsDataPreprocessor', mean=[127.5] * 3, std=[64.] * 3),
        backbone=tiny_backbone_cfg(
            'DyTViT',
            adapter_cfg=dict(bottleneck=8, scale=1.0, dropout=0.0, num_experts=3, mixing='adamix')),
        head=dict(
            type='LinearClsHead', num_classes=NUM_CLASSES, in_channels=TINY_ARCH['embed_dims']),
        **kwargs)
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg)
    model.init_weights()
    with torch.no_grad():
        for block in model.backbone.dyt_blocks():
            for name in ('down_weight', 'up_weight'):
                getattr(block.adapter, name).normal_(std=0.3)
        model.head.fc.weight.normal_()  # logits far from uniform
    return model


def head_outputs(model):
    """The logits of every head call, in order."""
    outputs = []
    model.head.register_forward_hook(lambda module, args, out: outputs.append(out.detach()))
    return outputs


def test_train_step_logs_the_weighted_kl_of_two_dynamic_passes():
    model = adamix_classifier(consistency_loss_weight=0.5)
    outputs = head_outputs(model)
    torch.manual_seed(2)
    log = model.train_step(labelled_batch(), sgd(model, lr=0.0))
    complete, dynamic, second = outputs  # the complete pass, then two dynamic passes
    log_p, log_q = dynamic.log_softmax(-1), second.log_softmax(-1)
    kl_qp = (log_q.exp() * (log_q - log_p)).sum(-1).mean()
    kl_pq = (log_p.exp() * (log_p - log_q)).sum(-1).mean()
    kl = (kl_qp + kl_pq) / 2
    assert float(kl) > 1e-3  # the passes drew different experts
    torch.testing.assert_close(log['loss_consistency'], 0.5 * kl)
    terms = ('loss_cls', 'loss_cls_complete', 'loss_distill', 'loss_rate', 'loss_consistency')
    assert float(log['loss']) == pytest.approx(sum(float(log[k]) for k in terms), rel=1e-5)


def test_weight_zero_runs_one_dynamic_pass_and_logs_no_consistency():
    model = adamix_classifier()
    outputs = head_outputs(model)
    log = model.train_step(labelled_batch(), sgd(model, lr=0.0))
    assert 'loss_consistency' not in log and len(outputs) == 2


def test_a_negative_weight_is_named():
    with pytest.raises(ValueError, match='consistency_loss_weight=-1.0 must be'):
        adamix_classifier(consistency_loss_weight=-1.0)
