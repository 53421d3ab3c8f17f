"""DynamicBackbone, the protocol the DyT models and DispatchRateHook ask of a
backbone: its no-op defaults (AdaptFormer's AdapterViT), and a backbone of a
user's own that implements it, trained by DyTImageClassifier with its rate
loss and refused by a stock classifier."""
import pytest
import torch
from mmengine.registry import DefaultScope
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample
from torch import nn

from helpers.classifiers import NUM_CLASSES, dyt_classifier, labelled_batch
from helpers.models import IMG_SIZE, TINY_ARCH, images, tiny, tiny_backbone_cfg
from mmvitdyn.models import AdapterViT, ViT
from mmvitdyn.models.backbones import DynamicBackbone

TARGET = 0.25


@MODELS.register_module(name='TestScaledViT', force=True)
class ScaledViT(DynamicBackbone, ViT):
    """A ViT whose output a learned "rate" sigmoid(g) scales, trained towards
    TARGET: the smallest backbone with a rate loss of its own."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.gate = nn.Parameter(torch.tensor(2.0))

    def needs_objective(self) -> bool:
        return True

    def activation_rates(self):
        return {'act_rate': float(self.gate.sigmoid())}

    def rate_loss(self):
        return (self.gate.sigmoid() - TARGET)**2

    def forward(self, x):
        self.check_objective()
        return tuple(out * self.gate.sigmoid() for out in super().forward(x))


def classifier(type_: str, backbone: str = 'TestScaledViT'):
    head = dict(type='LinearClsHead', num_classes=NUM_CLASSES, in_channels=TINY_ARCH['embed_dims'])
    cfg = dict(
        type=type_,
        data_preprocessor=dict(type='ClsDataPreprocessor', mean=[127.5] * 3, std=[64.] * 3),
        backbone=tiny_backbone_cfg(backbone),
        head=head)
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        return MODELS.build(cfg).train()


def test_the_defaults_are_those_of_a_backbone_without_token_selection():
    backbone = tiny(AdapterViT)
    x = images(2)
    with backbone.complete_mode() as inside:
        assert inside is backbone
        complete = backbone(x)[0]
    torch.testing.assert_close(backbone(x)[0], complete, rtol=0, atol=0)
    assert backbone.dispatch_masks() == [] and backbone.activation_rates() == {}
    assert backbone.rate_loss().item() == 0.0 and not backbone.needs_objective()


def test_adaptformer_in_a_dyt_classifier_trains_with_the_task_loss_alone():
    model = classifier('DyTImageClassifier', 'AdapterViT')
    data = model.data_preprocessor(labelled_batch(), training=True)
    losses = model(**data, mode='loss')
    assert sorted(losses) == ['loss_cls']


def test_a_backbone_of_ones_own_trains_with_its_rate_loss():
    """loss_rate = 2 (sigmoid(2) - 0.25)^2, computed here, with its gradient
    4 (s - 0.25) s (1 - s) on the gate."""
    model = classifier('DyTImageClassifier')
    data = model.data_preprocessor(labelled_batch(), training=True)
    losses = model(**data, mode='loss')
    s = torch.tensor(2.0).sigmoid()
    assert losses['loss_rate'].item() == pytest.approx(2 * (s - TARGET).item()**2, rel=1e-6)
    assert losses['act_rate'].item() == pytest.approx(s.item(), rel=1e-6)
    (gate_grad, ) = torch.autograd.grad(losses['loss_rate'], [model.backbone.gate])
    assert gate_grad.item() == pytest.approx((4 * (s - TARGET) * s * (1 - s)).item(), rel=1e-5)


def test_a_stock_classifier_with_it_is_refused_in_training():
    model = classifier('ImageClassifier')
    data = model.data_preprocessor(labelled_batch(), training=True)
    with pytest.raises(RuntimeError, match='ScaledViT is training without the loss terms'):
        model(**data, mode='loss')
    model.eval()(torch.zeros(1, 3, IMG_SIZE, IMG_SIZE), [DataSample()], mode='predict')


def test_a_backbone_outside_the_protocol_is_refused():
    with pytest.raises(TypeError, match='needs a DyT backbone .*; ViT is not one'):
        dyt_classifier(backbone=tiny_backbone_cfg('ViT'))
