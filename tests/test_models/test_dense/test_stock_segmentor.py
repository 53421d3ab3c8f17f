"""Our backbones inside mmseg's own EncoderDecoder, configured the mmseg way."""
import pytest
import torch
from mmengine.config import ConfigDict
from mmengine.registry import DefaultScope
from mmseg.registry import MODELS

from helpers.models import tiny, tiny_backbone_cfg


def segmentor_cfg(**model):
    """mmseg's EncoderDecoder with a tiny ViT (one 32-channel map) and an FCN head,
    as a config file gives it (a ConfigDict)."""
    return ConfigDict(
        type='EncoderDecoder',
        data_preprocessor=dict(type='SegDataPreProcessor', size=(32, 32)),
        backbone=tiny_backbone_cfg(out_type='featmap'),
        decode_head=dict(
            type='FCNHead',
            in_channels=32,
            channels=8,
            num_convs=1,
            num_classes=3,
            loss_decode=dict(type='CrossEntropyLoss')),
        **model)


def test_mmseg_pretrained_loads_into_our_backbone(tmp_path):
    """mmseg's ``model.pretrained`` (its stock ViT configs set it) reaches the
    backbone as ``pretrained=`` and loads, as for mmseg's own backbones."""
    checkpoint = tmp_path / 'vit.pth'
    source = tiny(seed=3)
    torch.save(source.state_dict(), checkpoint)
    with DefaultScope.overwrite_default_scope('mmseg'):
        model = MODELS.build(segmentor_cfg(pretrained=str(checkpoint)))
    model.init_weights()
    for name, value in source.state_dict().items():
        assert torch.equal(model.backbone.state_dict()[name], value), name


def test_pretrained_and_a_checkpoint_init_cfg_are_refused(tmp_path):
    cfg = segmentor_cfg(pretrained='a.pth')
    cfg.backbone.init_cfg = dict(type='Pretrained', checkpoint='b.pth')
    with DefaultScope.overwrite_default_scope('mmseg'), pytest.raises(
            ValueError, match=r"pretrained='a.pth' and init_cfg=.*both load a checkpoint"):
        MODELS.build(cfg)


def test_pretrained_must_be_a_path():
    with pytest.raises(ValueError, match=r'pretrained=3 must be a checkpoint path or URL'):
        tiny(pretrained=3)
