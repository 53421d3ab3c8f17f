"""The configs of the paper's experiments hold its recipe (the spec's
"Descendants and recipes"): ImageNet descendants fine-tune 50 epochs (From
Scratch 100), downstream runs 500; AdamW, lr 5e-4 x batch / 512, weight
decay 0.05, 5 warm-up epochs then cosine, RandAugment, Mixup 0.8, CutMix
1.0, label smoothing 0.1, random erasing 0.25; the warm-up and gradient
clipping of the public code's commands. And the suite is complete:
DeiT-B/S/Ti descendant depths, Swin-T/B ancestries and descendants, every
row of Table 2 on every data set, the data sets' types, classes and
data-root errors. (test_configs.py builds
every model.)"""
import re

import numpy as np
import pytest
from mmengine.dataset import Compose
from mmengine.registry import init_default_scope

from helpers.configs import renamed_to
from helpers.learngene_configs import CONFIG_DIR, read_config
from mmvitdyn.datasets import check_data_roots

# Table 2: data set -> (mmpretrain data set type, classes, data root).
DOWNSTREAM = {
    'cifar10': ('CIFAR10', 10, 'data/cifar10'),
    'cifar100': ('CIFAR100', 100, 'data/cifar100'),
    'flowers102': ('Flowers102', 102, 'data/flowers102'),
    'stanford-cars': ('StanfordCars', 196, 'data/stanford_cars'),
    'cub': ('CUB', 200, 'data/CUB_200_2011'),
    'food101': ('Food101', 101, 'data/food-101'),
    'inat2019': ('FileCheckedCustomDataset', 1010, 'data/inat2019'),
    # The rows of the review answer R4 (2).
    'stanford-dogs': ('FileCheckedCustomDataset', 120, 'data/stanford_dogs'),
    'nabirds': ('FileCheckedCustomDataset', 555, 'data/nabirds'),
    'svhn': ('FileCheckedCustomDataset', 10, 'data/svhn'),
    'dtd': ('DTD', 47, 'data/dtd'),
    'eurosat': ('FileCheckedCustomDataset', 10, 'data/eurosat'),
    'resisc45': ('FileCheckedCustomDataset', 45, 'data/resisc45'),
}
# Table 2's rows: config name pattern (with the depth and data set) -> backbone
# and init. The descendants of Table 2 have 12 layers (the public code's depth,
# test_table2_as_run.py); their 6-layer variants are checked alike.
ROWS = {
    'learngene-vit-s-p16-l{depth}-h6_deit-s-eps10_8xb64-500e_{data}-224px':
    ('LearngeneViT', 'cluster'),
    'learngene-vit-s-p16-l{depth}-h6_deit-s-heuristic_8xb64-500e_{data}-224px':
    ('LearngeneViT', 'heuristic'),
    'learngene-vit-s-p16-l{depth}-h6_deit-s-auto_8xb64-500e_{data}-224px': ('LearngeneViT', 'auto'),
    'learngene-vit-s-p16-l{depth}-h6_tleg-aux-vit-s_8xb64-500e_{data}-224px':
    ('LearngeneViT', 'tleg'),
    'deit-s-p16_pretrain-finetune_8xb64-500e_{data}-224px': ('ViT', 'pretrained'),
    'learngene-vit-s-p16-l{depth}-h6_scratch_8xb64-500e_{data}-224px': ('ViT', 'scratch'),
}
DEPTHS = (12, 6)
# The public code's commands (github.com/BruceQFWang/NeurIPS24-Cluster-Learngene,
# README.md): the downstream one (README.md:76, 500 epochs) passes
# --warmup-epochs 10, the ImageNet ones (README.md:58-68, 50 epochs) 5; none
# passes --clip-grad, whose default is None (train.py:156; models/engine.py:361
# hands it to the loss scaler as clip_grad): no clipping.
WARMUP_EPOCHS = {'downstream': 10, 'in1k': 5}
LEARNGENES = {
    'cluster': 'checkpoints/learngene_deit-s-p16_eps10_in1k.pth',
    'heuristic': 'checkpoints/heuristic-learngene_deit-s-p16_in1k.pth',
    'auto': 'checkpoints/auto-learngene_deit-s-p16_in1k.pth',
    'tleg': 'checkpoints/tleg-learngene_vit-s-p16_in1k.pth',
}
# Configs of the paper's classification experiments (and the TLEG Aux-Net,
# trained with the same recipe): {gpus}x b{batch}-{epochs}e on ImageNet or a
# Table 2 data set, at 224 (earlier names aside: their names are not theirs).
RECIPE_CONFIGS = sorted(
    p for p in CONFIG_DIR.glob('*.py') if
    re.search(rf'_8xb\d+-\d+e_(in1k|{"|".join(DOWNSTREAM)})-224px$', p.stem) and not renamed_to(p))
# TLEG's public code (github.com/AlphaXia/TLEG at 6e30a5c), README.md:37-38: the
# Aux-S command trains 150 epochs with --drop-path 0.0; main.py:52: the
# descendants' commands keep the default drop path, 0.1.
TLEG_AUX_EPOCHS, TLEG_AUX_DROP_PATH = 150, 0.0


def test_the_suite_is_there():
    assert len(RECIPE_CONFIGS) >= 70
    names = {p.stem for p in CONFIG_DIR.glob('*.py')}
    for model, heads, ancestry in (('b', 6, 'b'), ('s', 6, 's'), ('ti', 3, 'ti')):
        for depth in (6, 9, 10, 11, 12):
            assert (f'learngene-vit-{model}-p16-l{depth}-h{heads}_deit-{ancestry}-eps10_'
                    '8xb128-50e_in1k-224px') in names, (model, depth)
    for name in ('deit-s-p16_ancestry_in1k-224px', 'deit-ti-p16_ancestry_in1k-224px',
                 'deit-s-p16_pretrain-finetune_8xb128-50e_in1k-224px',
                 'deit-ti-p16_pretrain-finetune_8xb128-50e_in1k-224px',
                 'tleg-aux-vit-s-p16_levit-384-distill_8xb64-150e_in1k-224px',
                 'swin-t-p4-w7_ancestry_in1k-224px', 'swin-b-p4-w7_ancestry_in1k-224px',
                 'learngene-swin-t-p4-w7-h2-4-8-16_swin-t-eps10_8xb128-50e_in1k-224px',
                 'learngene-swin-b-p4-w7-h2-4-8-16_swin-b-eps10_8xb128-50e_in1k-224px'):
        assert name in names, name
    for row in ROWS:
        for dataset in DOWNSTREAM:
            for depth in DEPTHS:
                name = row.format(depth=depth, data=dataset)
                assert name in names, name


@pytest.mark.parametrize('path', RECIPE_CONFIGS, ids=[p.stem for p in RECIPE_CONFIGS])
def test_paper_recipe(path):
    gpus, batch, epochs = map(int, re.search(r'_(\d+)xb(\d+)-(\d+)e_', path.stem).groups())
    cfg = read_config(path.stem)
    downstream = 'in1k' not in path.stem
    if downstream:
        assert epochs == 500
    elif path.stem.startswith('tleg-aux'):
        assert epochs == TLEG_AUX_EPOCHS
    elif '_scratch_' in path.stem:
        assert epochs == 100
    else:
        assert epochs == 50
    assert cfg.train_cfg.max_epochs == epochs
    assert cfg.train_dataloader.batch_size == batch
    total = gpus * batch
    optimizer = cfg.optim_wrapper.optimizer
    assert optimizer.type == 'AdamW' and optimizer.weight_decay == 0.05
    assert optimizer.lr == pytest.approx(5e-4 * total / 512)
    assert cfg.auto_scale_lr.base_batch_size == total
    warmup, cosine = cfg.param_scheduler
    epochs = WARMUP_EPOCHS['downstream' if downstream else 'in1k']
    assert (warmup.type, warmup.by_epoch, warmup.end) == ('LinearLR', True, epochs)
    assert (cosine.type, cosine.begin, cosine.get('end')) == ('CosineAnnealingLR', epochs, None)
    assert cfg.optim_wrapper.get('clip_grad') is None
    assert [(a.type, a.alpha) for a in cfg.model.train_cfg.augments] == [('Mixup', 0.8),
                                                                         ('CutMix', 1.0)]
    assert (cfg.model.head.loss.type, cfg.model.head.loss.label_smooth_val) == ('LabelSmoothLoss',
                                                                                0.1)
    pipeline = {t.type: t for t in cfg.train_dataloader.dataset.pipeline}
    assert pipeline['RandomResizedCrop'].scale == 224
    assert (pipeline['RandAugment'].magnitude_level, pipeline['RandAugment'].num_policies) == (9, 2)
    assert pipeline['RandomErasing'].erase_prob == 0.25
    test = {t.type: t for t in cfg.val_dataloader.dataset.pipeline}
    assert test['CenterCrop'].crop_size == 224
    assert cfg.model.backbone.get('img_size', 224) == 224
    if cfg.model.backbone.type == 'LearngeneViT':
        assert cfg.model.backbone.drop_path_rate == 0.1
    if cfg.model.backbone.type == 'LinearExpansionViT':
        assert cfg.model.backbone.drop_path_rate == TLEG_AUX_DROP_PATH


@pytest.mark.parametrize('dataset', sorted(DOWNSTREAM))
@pytest.mark.parametrize('row, depth', [(row, depth) for row in sorted(ROWS)
                                        for depth in (DEPTHS if '{depth}' in row else DEPTHS[:1])])
def test_table_2_rows(row, depth, dataset):
    cfg = read_config(row.format(depth=depth, data=dataset))
    kind, classes, _ = DOWNSTREAM[dataset]
    assert cfg.train_dataloader.dataset.type == cfg.val_dataloader.dataset.type == kind
    assert cfg.model.head.num_classes == cfg.data_preprocessor.num_classes == classes
    backbone = cfg.model.backbone
    backbone_type, init = ROWS[row]
    assert backbone.type == backbone_type
    if backbone_type == 'LearngeneViT':
        # The ancestry's 6 heads of 64 (omega = 1), from DeiT-S's learngene.
        assert backbone.arch == dict(num_layers=depth, omega=1)
        assert backbone.get('init_mode', 'cluster') == init
        assert backbone.learngene == LEARNGENES[init]
        assert backbone.ffn_sharing == 'independent'
        assert cfg.model.head.in_channels == 384
    elif init == 'scratch':
        assert backbone.arch == dict(
            embed_dims=384, num_layers=depth, num_heads=6, feedforward_channels=1536)
        assert 'init_cfg' not in backbone
    else:
        assert backbone.arch == 'deit-s'
        assert backbone.init_cfg.checkpoint == 'checkpoints/deit_small_patch16_224-cd65a155.pth'


@pytest.mark.parametrize('dataset', sorted(DOWNSTREAM))
def test_missing_data_says_how_to_get_it(tmp_path, monkeypatch, dataset):
    monkeypatch.chdir(tmp_path)
    cfg = read_config(f'learngene-vit-s-p16-l6-h6_deit-s-eps10_8xb64-500e_{dataset}-224px')
    root = DOWNSTREAM[dataset][2]
    with pytest.raises(FileNotFoundError) as error:
        check_data_roots(cfg)
    message = str(error.value)
    assert f'train_dataloader.dataset.data_root {root!r} does not exist; ' in message
    assert 'none of the known data roots' not in message


@pytest.mark.parametrize('dataset', ['cifar10', 'cifar100'])
def test_cifar_pipelines_take_rgb_arrays_to_224(dataset):
    """mmpretrain's CIFAR gives 32x32 RGB arrays (no file to load)."""
    cfg = read_config(f'learngene-vit-s-p16-l6-h6_deit-s-eps10_8xb64-500e_{dataset}-224px')
    init_default_scope('mmpretrain')
    assert cfg.data_preprocessor.to_rgb is False
    image = np.random.default_rng(0).integers(0, 256, (32, 32, 3), dtype=np.uint8)
    for loader in ('train_dataloader', 'val_dataloader'):
        packed = Compose(cfg[loader].dataset.pipeline)(dict(img=image, gt_label=3))
        assert tuple(packed['inputs'].shape) == (3, 224, 224)
