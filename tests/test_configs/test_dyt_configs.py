"""The DyT configs parse, carry the paper's recipes, and build (with a tiny ViT)."""
import copy
import re

import pytest
import torch
from mmengine.registry import init_default_scope
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from helpers.configs import DYT_CONFIG_DIR, dyt_config
from helpers.dyt import assert_dyt_settings
from helpers.models import IMG_SIZE, PATCH_SIZE, TINY_ARCH, images, tiny


def vtab(model='vit-b-p16-dyt', width='d16'):
    """The VTAB-1K config of ``model`` with adapters ``width`` wide (None: no adapters)."""
    return f'{model}{"_" + width if width else ""}_1xb64-100e_vtab1k-224px.py'


TEMPLATE = vtab()
VTAB_CLASSES = dict(
    cifar=100,
    caltech101=102,
    dtd=47,
    oxford_flowers102=102,
    oxford_iiit_pet=37,
    svhn=10,
    sun397=397,
    patch_camelyon=2,
    eurosat=10,
    resisc45=45,
    diabetic_retinopathy=5,
    clevr_count=8,
    clevr_dist=6,
    dmlab=6,
    kitti=4,
    dsprites_loc=16,
    dsprites_ori=16,
    smallnorb_azi=18,
    smallnorb_ele=9)
FULL_DATA = dict(bottleneck=64, scale=0.1)
# config -> (dispatch, target_rate, adapter_cfg, freeze_pretrained)
VARIANTS = {
    TEMPLATE: ('mlp', 0.5, dict(bottleneck=16, scale=1.0, num_experts=1), True),
    vtab(width='d8'): ('mlp', 0.5, dict(bottleneck=8, scale=1.0), True),
    vtab('vit-b-p16-dyt-attn'): ('attn', 0.5, dict(bottleneck=16), True),
    vtab('vit-b-p16-dyt-attn-mlp'): ('attn_mlp', 0.7, dict(bottleneck=16), True),
    vtab('vit-b-p16-dyt-layer'): ('layer', 0.7, dict(bottleneck=16), True),
    vtab('vit-b-p16-dyt-moe4'): ('mlp', 0.5, dict(num_experts=4), True),
    vtab('vit-b-p16-adaptformer'): (None, None, dict(bottleneck=16), True),
    vtab('vit-b-p16-full-ft', width=None): (None, None, None, False),
    'vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py': ('mlp', 0.5, FULL_DATA, True),
    'vit-b-p16-dyt_d64_8xb128-100e_in1k-224px.py': ('mlp', 0.5, FULL_DATA, True),
}


def task_config(task):
    return f'vit-b-p16-dyt_d16_1xb64-100e_vtab1k-{task.replace("_", "-")}-224px.py'


def lr_schedule(cfg):
    """(lr, weight decay, warm-up end, cosine end, eta_min, epochs)."""
    warmup, cosine = cfg.param_scheduler
    optimizer = cfg.optim_wrapper.optimizer
    return (optimizer.lr, optimizer.weight_decay, warmup.end, cosine.end, cosine.eta_min,
            cfg.train_cfg.max_epochs)


def test_the_configs_exist():
    names = {p.name for p in DYT_CONFIG_DIR.glob('*.py')}
    assert set(VARIANTS) | {task_config(t) for t in VTAB_CLASSES} <= names


@pytest.mark.parametrize('task', sorted(VTAB_CLASSES))
def test_vtab_task_configs(task):
    cfg = dyt_config(task_config(task))
    classes = VTAB_CLASSES[task]
    assert cfg.model.head.num_classes == classes
    loaders = [cfg.train_dataloader, cfg.val_dataloader, cfg.test_dataloader]
    assert [d.dataset.data_root for d in loaders] == [f'data/vtab-1k/{task}'] * 3
    assert [d.dataset.ann_file for d in loaders] == ['train800val200.txt', 'test.txt', 'test.txt']
    assert [d.dataset.num_classes for d in loaders] == [classes] * 3  # the labels' range
    assert cfg.model.backbone.adapter_cfg.bottleneck == 16


def test_vtab_recipe():
    cfg = dyt_config(TEMPLATE)
    assert cfg.train_dataloader.batch_size == cfg.auto_scale_lr.base_batch_size == 64
    assert lr_schedule(cfg) == (1e-3, 1e-4, 10, 100, 1e-5, 100)
    assert cfg.optim_wrapper.optimizer.type == 'AdamW'
    assert cfg.default_scope == 'mmpretrain'
    assert cfg.custom_imports == dict(imports=['mmvitdyn'], allow_failed_imports=False)
    model = cfg.model
    assert (model.type, model.complete_loss, model.distill_loss,
            model.rate_loss_weight) == ('DyTImageClassifier', True, True, 2.0)
    backbone = model.backbone
    assert (backbone.type, backbone.arch, backbone.img_size,
            backbone.patch_size) == ('DyTViT', 'base', 224, 16)
    assert (backbone.drop_path_rate, backbone.out_type) == (0.0, 'cls_token')
    assert backbone.init_cfg.type == 'Pretrained' and backbone.init_cfg.checkpoint


def test_full_data_recipe():
    cifar = dyt_config('vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py')
    imagenet = dyt_config('vit-b-p16-dyt_d64_8xb128-100e_in1k-224px.py')
    for cfg in (cifar, imagenet):
        assert 8 * cfg.train_dataloader.batch_size == cfg.auto_scale_lr.base_batch_size == 1024
        assert lr_schedule(cfg) == (4e-3, 0.01, 20, 100, 0.0, 100)
    assert cifar.model.head.num_classes == 100
    assert imagenet.model.head.num_classes == 1000


@pytest.mark.parametrize('name', sorted(VARIANTS))
def test_variant_settings(name):
    dispatch, rate, adapter, freeze = VARIANTS[name]
    backbone = dyt_config(name).model.backbone
    assert backbone.get('target_rate') == rate
    assert_dyt_settings(backbone, dispatch, adapter, freeze)


@pytest.fixture(scope='module')
def tiny_checkpoint(tmp_path_factory):
    """A timm-format checkpoint of a tiny ViT (with a head, as timm saves it)."""
    path = tmp_path_factory.mktemp('ckpt') / 'vit-tiny.pth'
    head = torch.zeros(10, TINY_ARCH['embed_dims'])
    torch.save({**tiny().state_dict(), 'head.weight': head}, path)
    return str(path)


@pytest.mark.parametrize('name', [
    TEMPLATE,
    vtab('vit-b-p16-dyt-attn-mlp'),
    vtab('vit-b-p16-dyt-moe4'),
    vtab('vit-b-p16-full-ft', width=None)
])
def test_model_builds_loads_and_trains(name, tiny_checkpoint):
    cfg = copy.deepcopy(dyt_config(name))
    cfg.model.backbone.update(arch=TINY_ARCH, img_size=IMG_SIZE, patch_size=PATCH_SIZE)
    cfg.model.backbone.init_cfg.checkpoint = tiny_checkpoint
    cfg.model.head.in_channels = TINY_ARCH['embed_dims']
    init_default_scope('mmpretrain')
    model = MODELS.build(cfg.model)
    model.init_weights()
    trainable = {n for n, p in model.backbone.named_parameters() if p.requires_grad}
    assert model.head.fc.weight.requires_grad
    if cfg.model.backbone.get(
            'freeze_pretrained'):  # blocks.{i}.adapter.*, blocks.{i}.dispatchers.*
        dyt = {
            n
            for n, _ in model.backbone.named_parameters()
            if re.match(r'blocks\.\d+\.(adapter|dispatchers)\.', n)
        }
        assert trainable == dyt and len(dyt) >= 4 * TINY_ARCH['num_layers']
    else:
        assert trainable == {n for n, _ in model.backbone.named_parameters()}
    samples = [DataSample().set_gt_label(i) for i in range(2)]
    losses = model.loss(images(2), samples)
    assert all(torch.isfinite(v) for v in losses.values())
