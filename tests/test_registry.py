"""Importing mmvitdyn registers its modules where every OpenMMLab scope finds them."""
import pytest
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mmvitdyn  # noqa: F401
from helpers.models import TINY_ARCH, tiny_backbone_cfg

BACKBONE = tiny_backbone_cfg('ViT')


def child_registry(scope):
    module = {
        'mmdet': 'mmdet.registry',
        'mmseg': 'mmseg.registry',
        'mmpretrain': 'mmpretrain.registry'
    }[scope]
    return __import__(module, fromlist=['MODELS']).MODELS


@pytest.mark.parametrize('scope', ['mmdet', 'mmseg', 'mmpretrain'])
def test_backbone_builds_from_child_registry(scope):
    registry = child_registry(scope)
    assert registry.scope == scope and 'ViT' not in registry.module_dict
    with DefaultScope.overwrite_default_scope(scope):
        model = registry.build(BACKBONE)
    assert type(model) is mmvitdyn.models.ViT


def test_config_with_custom_imports_builds_a_classifier(tmp_path):
    cfg_file = tmp_path / 'cfg.py'
    cfg_file.write_text("default_scope = 'mmpretrain'\n"
                        "custom_imports = dict(imports=['mmvitdyn'], allow_failed_imports=False)\n"
                        f"model = dict(type='ImageClassifier', backbone={BACKBONE!r},\n"
                        "             head=dict(type='LinearClsHead', num_classes=3, "
                        f"in_channels={TINY_ARCH['embed_dims']}))\n")
    cfg = Config.fromfile(str(cfg_file))
    from mmpretrain.registry import MODELS
    with DefaultScope.overwrite_default_scope(cfg.default_scope):
        model = MODELS.build(cfg.model)
    assert type(model.backbone) is mmvitdyn.models.ViT


def test_cpu_ddp_wrapper_is_registered():
    from mmengine.registry import MODEL_WRAPPERS
    assert MODEL_WRAPPERS.get('CPUDistributedDataParallel') is not None
