"""Every configs/cluster_learngene/ config builds its model; the learngene
descendants are built from a tiny learngene of the same depth and heads (so
every arch of the configs applies) and run forward."""
import re

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import MODELS, init_default_scope

from helpers.tools import REPO
from mmvitdyn.models.backbones import LearngeneViT

from test_learngene.learngene_testing import make_ancestry, write_learngene

CONFIGS = sorted((REPO / 'configs/cluster_learngene').glob('*.py'))
WIDTH = 48  # the tiny learngenes' embed dim: 12 heads of 4


@pytest.fixture(scope='module')
def learngenes(tmp_path_factory):
    """Tiny stand-ins for the DeiT-B and the digits learngenes."""
    root = tmp_path_factory.mktemp('learngenes')
    deit = make_ancestry(dict(embed_dims=WIDTH,
                              num_layers=12,
                              num_heads=12,
                              feedforward_channels=96),
                         img_size=224,
                         patch_size=16)
    digits = make_ancestry(dict(embed_dims=WIDTH,
                                num_layers=6,
                                num_heads=6,
                                feedforward_channels=96),
                           img_size=32,
                           patch_size=4)
    write_learngene(deit, root / 'deit.pth', eps=1.0)
    write_learngene(digits, root / 'digits.pth', eps=0.5)
    return dict(deit=str(root / 'deit.pth'), digits=str(root / 'digits.pth'))


def test_names_follow_openmmlab_style():
    assert len(CONFIGS) >= 15
    for path in CONFIGS:
        # {model}_{setting}_{N}xb{B}-{schedule}_{dataset}-{res}; the ancestry is not trained.
        assert re.search(r'_\d+xb\d+-\d+[ek]_', path.name) or 'ancestry' in path.stem, path.name


@pytest.mark.parametrize('path', CONFIGS, ids=[p.stem for p in CONFIGS])
def test_config_builds(path, learngenes):
    cfg = Config.fromfile(path)
    assert cfg.custom_imports == dict(imports=['mmvitdyn'], allow_failed_imports=False)
    init_default_scope(cfg.default_scope)
    backbone = cfg.model.backbone
    if backbone.type == 'ViT':  # the ancestry and Pretraining-Finetuning: the real DeiT-B shape
        assert backbone.arch == 'deit-b'
        return
    assert backbone.type in ('LearngeneViT', 'DyTLearngeneViT')  # the latter: DyT on a descendant
    digits = 'digits' in path.stem
    backbone.learngene = learngenes['digits' if digits else 'deit']
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
    size = 32 if digits else 224
    with torch.no_grad():
        logits = model(torch.randn(1, 3, size, size), mode='tensor')
    assert logits.shape == (1, cfg.model.head.num_classes)
