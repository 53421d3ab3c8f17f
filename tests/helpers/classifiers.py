"""The tiny DyTImageClassifier the classifier and distributed-training tests
train, and labelled uint8 batches for its ``train_step``."""
import torch
from mmengine.optim import OptimWrapper
from mmengine.registry import DefaultScope
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from .models import IMG_SIZE, TINY_ARCH, tiny_backbone_cfg

NUM_CLASSES = 3


def dyt_classifier(**kwargs):
    """A DyTImageClassifier of TINY_ARCH (adapters of bottleneck 8, scale 1, 3 classes)
    built from seed 0, its adapters' up-projections non-zero so every path carries
    signal; ``kwargs`` override classifier arguments."""
    cfg = dict(
        type='DyTImageClassifier',
        data_preprocessor=dict(type='ClsDataPreprocessor', mean=[127.5] * 3, std=[64.] * 3),
        backbone=tiny_backbone_cfg(
            'DyTViT', adapter_cfg=dict(bottleneck=8, scale=1.0, dropout=0.0)),
        head=dict(
            type='LinearClsHead', num_classes=NUM_CLASSES, in_channels=TINY_ARCH['embed_dims']))
    cfg.update(kwargs)
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg)
    model.init_weights()
    for block in model.backbone.dyt_blocks():
        torch.nn.init.normal_(block.adapter.up.weight, std=0.1)
    return model


def labelled_batch(n=6, seed=3):
    """``train_step`` data: n uint8 images (3, IMG_SIZE, IMG_SIZE) from ``seed``, labels i % 3."""
    g = torch.Generator().manual_seed(seed)
    return dict(
        inputs=[
            torch.randint(0, 256, (3, IMG_SIZE, IMG_SIZE), generator=g, dtype=torch.uint8)
            for _ in range(n)
        ],
        data_samples=[DataSample().set_gt_label(i % NUM_CLASSES) for i in range(n)])


def sgd(model, lr=1.0, **kwargs):
    """OptimWrapper of plain SGD over the trainable parameters (lr 1: a step moves
    each weight by minus its gradient); ``kwargs`` go to the OptimWrapper."""
    params = [p for p in model.parameters() if p.requires_grad]
    return OptimWrapper(torch.optim.SGD(params, lr=lr), **kwargs)
