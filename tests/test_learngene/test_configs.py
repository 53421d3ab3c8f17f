"""Every configs/cluster_learngene/ config builds its model; the learngene
descendants are built from tiny stand-ins of the learngene files they name
(the same depth and heads, so every arch of the configs applies) and run
forward."""
import re

import pytest
import torch
from mmengine.registry import MODELS, init_default_scope
from mmpretrain.models import LeViT, SwinTransformer

from helpers.learngene import make_ancestry, write_learngene
from helpers.learngene_configs import CONFIG_DIR, read_config
from helpers.models import images, tiny
from mmvitdyn.learngene import (LearngeneViT, LinearExpansionViT, ViTAncestry, build_learngene,
                                levit_arch)
from mmvitdyn.learngene.ancestries.levit import LeViTAncestry
from mmvitdyn.models import ViT

CONFIGS = sorted(CONFIG_DIR.glob('*.py'))
WIDTH = 48  # the tiny learngenes' embed dim: 12 heads of 4, 6 of 8, 3 of 16
DATASETS = ('cifar10', 'cifar100', 'flowers102', 'stanford-cars', 'cub', 'food101', 'inat2019',
            'stanford-dogs', 'nabirds', 'svhn', 'dtd', 'eurosat', 'resisc45')
# The From-Scratch rows of Table 2 (12 layers) and of their 6-layer variants.
DEIT_S_SCRATCH = 'learngene-vit-s-p16-l{}-h6_scratch_8xb64-500e_{}-224px.py'
# From-Scratch baselines: the descendant's shape (embed dims, layers, heads,
# head dim, FFN, patch, image size) as a plain ViT.
SCRATCH = {
    'learngene-vit-b-p16-l12-h6_scratch_8xb128-100e_in1k-224px.py': (768, 12, 6, 64, 3072, 16, 224),
    'learngene-vit-b-p16-l12-h6_scratch_8xb64-500e_cifar100-224px.py':
    (768, 12, 6, 64, 3072, 16, 224),
    'learngene-vit-mini-p4-h3_scratch_1xb32-10e_digits-32px.py': (192, 6, 3, 32, 768, 4, 32),
    **{
        DEIT_S_SCRATCH.format(n, d): (384, n, 6, 64, 1536, 16, 224)
        for d in DATASETS
        for n in (12, 6)
    },
}
# Tiny stand-ins of the Swin learngenes: stage-0 width and the real heads per
# stage (heads of 8; the last stage is 8 x as wide).
SWIN_STANDINS = {
    'learngene_swin-t-p4-w7_eps10_in1k.pth': (24, [3, 6, 12, 24]),
    'learngene_swin-b-p4-w7_eps10_in1k.pth': (32, [4, 8, 16, 32]),
}
# The paper's incrementing / decrementing descendants: omega 2 / 1.5 / 1 over the thirds.
PAPER_SCHEDULES = {
    'learngene-vit-b-p16-l12-h6-8-12_deit-b-eps10_8xb128-50e_in1k-224px':
    [6] * 4 + [8] * 4 + [12] * 4,
    'learngene-vit-b-p16-l12-h12-8-6_deit-b-eps10_8xb128-50e_in1k-224px':
    [12] * 4 + [8] * 4 + [6] * 4,
}


@pytest.fixture(scope='module')
def learngenes(tmp_path_factory):
    """Tiny stand-ins of the learngene files the configs name (by file name),
    and of the digits learngene."""
    root = tmp_path_factory.mktemp('learngenes')
    files = {}

    def deit(heads):
        return make_ancestry(
            dict(embed_dims=WIDTH, num_layers=12, num_heads=heads, feedforward_channels=96),
            img_size=224,
            patch_size=16)

    for name, heads in (('deit-b', 12), ('deit-s', 6), ('deit-ti', 3)):
        files[f'learngene_{name}-p16_eps10_in1k.pth'] = root / f'{name}.pth'
        write_learngene(deit(heads), root / f'{name}.pth', eps=1.0)
    deit_s = deit(6)
    for method in ('heuristic', 'auto'):
        files[f'{method}-learngene_deit-s-p16_in1k.pth'] = root / f'{method}.pth'
        ViTAncestry(deit_s).extract_blocks(method).save(str(root / f'{method}.pth'))
    aux = tiny(  # TLEG's Aux-Net has no class token
        LinearExpansionViT,
        arch=dict(embed_dims=WIDTH, num_layers=12, num_heads=6, feedforward_channels=96),
        img_size=224,
        patch_size=16,
        class_token=False,
        out_type='avg_featmap')
    files['tleg-learngene_vit-s-p16_in1k.pth'] = root / 'tleg.pth'
    ViTAncestry(aux).extract_expansion().save(str(root / 'tleg.pth'))
    for name, (width, heads) in SWIN_STANDINS.items():
        torch.manual_seed(0)
        ancestry = SwinTransformer(
            arch=dict(embed_dims=width, depths=[1, 1, 1, 1], num_heads=heads),
            img_size=224,
            out_indices=(3, ))
        ancestry.init_weights()
        files[name] = root / name
        build_learngene(ancestry, [images(1, 224)], eps=1.0, out=str(root / name))
    # The LeViT-192 learngene's stand-in: its heads, depths and grids, 8 / 12 / 16 wide.
    torch.manual_seed(0)
    levit = LeViT(levit_arch([8, 12, 16], [3, 5, 6], [4, 4, 4], [4, 4, 4]), img_size=224)
    files['learngene_levit-192_eps10_in1k.pth'] = root / 'levit.pth'
    build_learngene(levit, [images(1, 224)], eps=1.0, out=str(root / 'levit.pth'))
    for method in ('heuristic', 'auto'):
        files[f'{method}-learngene_levit-192_in1k.pth'] = root / f'levit-{method}.pth'
        LeViTAncestry(levit).extract_blocks(method).save(str(root / f'levit-{method}.pth'))
    digits = make_ancestry(
        dict(embed_dims=WIDTH, num_layers=6, num_heads=6, feedforward_channels=96),
        img_size=32,
        patch_size=4)
    write_learngene(digits, root / 'digits.pth', eps=0.5)
    files['digits'] = root / 'digits.pth'
    return {name: str(path) for name, path in files.items()}


def test_names_follow_openmmlab_style():
    assert len(CONFIGS) >= 19
    for path in CONFIGS:
        # {model}_{setting}_{N}xb{B}-{schedule}_{dataset}-{res}; the ancestry is not trained.
        assert re.search(r'_\d+xb\d+-\d+[ek]_', path.name) or 'ancestry' in path.stem, path.name


@pytest.mark.parametrize('path', CONFIGS, ids=[p.stem for p in CONFIGS])
def test_config_builds(path, learngenes):
    cfg = read_config(path)
    assert cfg.custom_imports == dict(imports=['mmvitdyn'], allow_failed_imports=False)
    init_default_scope(cfg.default_scope)
    backbone = cfg.model.backbone
    if backbone.type == 'ViT':
        # An ancestry and Pretraining-Finetuning (the real DeiT-B/S/Ti), or a
        # From-Scratch baseline (test_scratch_baselines_are_plain_vits): built
        # and run with its depth, heads, patch and image size at the tiny width.
        assert backbone.arch in ('deit-b', 'deit-s', 'deit-t') or path.name in SCRATCH
        arch = ViT.arch_zoo[backbone.arch] if isinstance(backbone.arch, str) else backbone.arch
        assert cfg.model.head.in_channels == arch['embed_dims']
        backbone.arch = dict(
            arch, embed_dims=WIDTH, feedforward_channels=96, head_dim=WIDTH // arch['num_heads'])
        backbone.init_cfg = None  # no checkpoint
        cfg.model.head.in_channels = WIDTH
        model = MODELS.build(cfg.model)
        assert len(model.backbone.blocks) == arch['num_layers']
        assert model.backbone.blocks[0].attn.num_heads == arch['num_heads']
        size = backbone.img_size
        with torch.no_grad():
            logits = model(torch.randn(1, 3, size, size), mode='tensor')
        assert logits.shape == (1, cfg.model.head.num_classes)
        return
    if backbone.type == 'SwinTransformer':
        # A Swin ancestry (mmpretrain's Swin-T / Swin-B), or the tiny digits Swin: run it.
        if isinstance(backbone.arch, str):
            assert backbone.arch in ('tiny', 'base')
            return
        model = MODELS.build(cfg.model)
        model.init_weights()
        with torch.no_grad():
            assert model(torch.randn(1, 3, 32, 32), mode='tensor').shape == (1, 10)
        return
    if backbone.type == 'LearngeneSwin':
        tied = '-tied' in path.stem
        assert backbone.get('ffn_sharing', 'independent') == ('tied' if tied else 'independent')
        name = backbone.learngene.split('/')[-1]
        backbone.learngene = learngenes[name]
        cfg.model.head.in_channels = 8 * SWIN_STANDINS[name][0]
        model = MODELS.build(cfg.model)
        model.init_weights()
        with torch.no_grad():
            assert model(torch.randn(1, 3, 224, 224), mode='tensor').shape == (1, 1000)
        assert model.backbone.heads == [2, 4, 8, 16]  # both descendants
        return
    if backbone.type in ('LeViT', 'LearngeneLeViT'):
        # mmpretrain's LeViT-192 (the ancestry, Pretraining-Finetuning without its checkpoint,
        # From-Scratch), or a descendant of a stand-in learngene.
        if backbone.type == 'LeViT':
            assert backbone.arch == '192'
            backbone.init_cfg = None
        else:
            backbone.learngene = learngenes[backbone.learngene.split('/')[-1]]
            cfg.model.head.in_channels = 16
        model = MODELS.build(cfg.model)
        model.init_weights()
        model.eval()
        with torch.no_grad():
            logits = model(torch.randn(1, 3, 224, 224), mode='tensor')
        assert logits.shape == (1, cfg.model.head.num_classes)
        assert model.backbone.num_heads == [3, 5, 6] and model.backbone.depths == [4, 4, 4]
        return
    if backbone.type == 'LinearExpansionViT':  # TLEG's Aux-Net, at the tiny width
        backbone.arch = dict(embed_dims=WIDTH, num_layers=12, num_heads=6, feedforward_channels=96)
        cfg.model.head.in_channels = WIDTH
        cfg.model.teacher.init_cfg = None  # its LeViT-384 teacher, at random
        model = MODELS.build(cfg.model)
        model.init_weights()
        with torch.no_grad():
            assert model(torch.randn(1, 3, 224, 224), mode='tensor').shape == (1, 1000)
        return
    assert backbone.type in ('LearngeneViT', 'DyTLearngeneViT')  # the latter: DyT on a descendant
    digits = 'digits' in path.stem
    if not digits:
        # The paper's tables train independent copies; the -tied configs keep the sharing.
        tied = '-tied' in path.stem
        assert backbone.ffn_sharing == ('tied' if tied else 'independent')
        assert backbone.get('tie_heads', False) == ('-tied-heads' in path.stem)
    backbone.learngene = learngenes['digits' if digits else backbone.learngene.split('/')[-1]]
    if cfg.default_scope == 'mmseg':
        cfg.model.neck.in_channels = [WIDTH] * 4
        model = MODELS.build(cfg.model)
        outs = model.backbone(torch.randn(1, 3, 64, 64))
        assert [tuple(o.shape) for o in outs] == [(1, WIDTH, 4, 4)] * 4
        return
    cfg.model.head.in_channels = WIDTH
    model = MODELS.build(cfg.model)
    model.init_weights()
    assert isinstance(model.backbone, LearngeneViT)
    if path.stem in PAPER_SCHEDULES:
        assert [b.attn.num_heads for b in model.backbone.blocks] == PAPER_SCHEDULES[path.stem]
    size = 32 if digits else 224
    with torch.no_grad():
        logits = model(torch.randn(1, 3, size, size), mode='tensor')
    assert logits.shape == (1, cfg.model.head.num_classes)


@pytest.mark.parametrize('name', sorted(SCRATCH))
def test_scratch_baselines_are_plain_vits_of_the_descendant_shape(name):
    """No tied FFN group or shared head: as many free parameters as the
    descendant's T-Params (a plain ViT of its shape)."""
    cfg = read_config(CONFIG_DIR / name)
    init_default_scope(cfg.default_scope)
    backbone = MODELS.build(cfg.model.backbone)
    assert type(backbone).__name__ == 'ViT' and 'learngene' not in cfg.model.backbone
    c, layers, heads, d, f, p, size = SCRATCH[name]
    tokens = (size // p)**2 + 1
    per_layer = 2 * 2 * c + (c * 3 * heads * d + 3 * heads * d) + (heads * d * c + c) + (
        c * f + f + f * c + c)
    expected = (c * 3 * p * p + c) + c + tokens * c + layers * per_layer + 2 * c
    assert sum(q.numel() for q in backbone.parameters() if q.requires_grad) == expected
    assert backbone.blocks[0].attn.qkv.out_features == 3 * heads * d
    assert cfg.model.head.in_channels == c
