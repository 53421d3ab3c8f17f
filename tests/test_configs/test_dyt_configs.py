"""The DyT configs parse, carry the paper's recipes, and build (with a tiny ViT)."""
import copy
import re
from types import SimpleNamespace

import pytest
import torch
from mmengine.logging import MessageHub
from mmengine.registry import HOOKS, init_default_scope
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from helpers.configs import DYT_CONFIG_DIR, dyt_config
from helpers.dyt import assert_dyt_settings, trainable_names
from helpers.models import IMG_SIZE, PATCH_SIZE, TINY_ARCH, images, tiny
from mmvitdyn.models import TokenDispatcher


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


def tiny_model(cfg):
    """``cfg``'s model with a tiny ViT, random and in eval mode."""
    cfg = copy.deepcopy(cfg)
    cfg.model.backbone.update(
        arch=TINY_ARCH, img_size=IMG_SIZE, patch_size=PATCH_SIZE, init_cfg=None)
    if cfg.model.backbone.get('freeze_pretrained'):  # frozen random weights, on purpose
        cfg.model.backbone.allow_random_frozen = True
    cfg.model.head.in_channels = TINY_ARCH['embed_dims']
    init_default_scope('mmpretrain')
    torch.manual_seed(0)
    return MODELS.build(cfg.model).eval()


def test_annealed_temperature_config_follows_a_cosine_from_5_to_0_1():
    """The tau-anneal config's GumbelTemperatureHook, built from the config by
    mmengine's HOOKS registry, sets every dispatcher of the config's model (a
    tiny ViT) to torch's CosineAnnealingLR curve from 5 to 0.1 over the run's
    iterations; the rest of the config is the template's."""
    name = vtab('vit-b-p16-dyt-tau-anneal')
    cfg = copy.deepcopy(dyt_config(name))
    template = dyt_config(TEMPLATE)
    assert cfg.model == template.model
    assert cfg.custom_hooks[:-1] == template.custom_hooks
    model = tiny_model(cfg)
    hook = HOOKS.build(cfg.custom_hooks[-1])
    max_iters = cfg.train_cfg.max_epochs * 16  # 1,000 images at batch 64: 16 iterations an epoch
    # torch's cosine annealing of a learning rate from 5 to 0.1 over max_iters - 1 steps
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([param], lr=5.0)
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max_iters - 1, eta_min=0.1)
    expected = []
    for _ in range(max_iters):
        expected.append(optimizer.param_groups[0]['lr'])
        optimizer.step()
        cosine.step()
    assert expected[0] == 5.0 and expected[-1] == pytest.approx(0.1)
    dispatchers = [m for m in model.modules() if isinstance(m, TokenDispatcher)]
    assert len(dispatchers) == TINY_ARCH['num_layers']
    hub = MessageHub.get_instance('test_annealed_temperature')
    for iteration in (0, 1, max_iters // 4, max_iters // 2, max_iters - 2, max_iters - 1):
        runner = SimpleNamespace(model=model, iter=iteration, max_iters=max_iters, message_hub=hub)
        hook.before_train_iter(runner, iteration)
        taus = {m.tau for m in dispatchers}
        assert len(taus) == 1 and taus.pop() == pytest.approx(expected[iteration], rel=1e-6)
        assert hub.get_scalar('train/tau').current() == pytest.approx(expected[iteration])


@pytest.mark.parametrize('baseline,options', [
    (vtab('vit-b-p16-adaptformer'), {
        'model.backbone.dispatch': None
    }),
    (vtab('vit-b-p16-full-ft', width=None), {
        'model.backbone.dispatch': None,
        'model.backbone.adapter_cfg': None,
        'model.backbone.freeze_pretrained': False
    }),
])
def test_baseline_options_on_a_dyt_config_give_the_baseline_configs_model(baseline, options):
    """The options that docs/recipes.md and the sweeps give a baseline with, on the
    DyT task config: a DyTViT whose parameters, trainable set and logits are those
    of the baseline config's own class (AdapterViT, ViT) on the same weights."""
    dyt = copy.deepcopy(dyt_config(task_config('cifar')))
    dyt.merge_from_dict(options)
    ours, reference = tiny_model(dyt), tiny_model(dyt_config(baseline))
    assert type(ours.backbone).__name__ == 'DyTViT'
    assert type(
        reference.backbone).__name__ == ('AdapterViT' if 'adaptformer' in baseline else 'ViT')

    def shapes(model):
        return {k: tuple(v.shape) for k, v in model.state_dict().items()}

    assert shapes(ours) == shapes(reference)
    assert trainable_names(ours) == trainable_names(reference)
    for name, param in reference.named_parameters():  # adapters' up-projections start at 0
        if 'adapter.up' in name:
            torch.nn.init.normal_(param, std=0.2)
    ours.load_state_dict(reference.state_dict())
    x = images(2)
    with torch.no_grad():
        torch.testing.assert_close(ours(x), reference(x))
