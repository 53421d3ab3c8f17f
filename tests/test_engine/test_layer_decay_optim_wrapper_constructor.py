"""Layer-wise lr decay through the backbone's get_layer_depth: classifier, detector, segmentor."""
import pytest
import torch
from mmengine.config import Config
from mmengine.registry import MODELS, OPTIM_WRAPPER_CONSTRUCTORS, init_default_scope

from helpers.configs import DYT_ADE_CFG, DYT_COCO_CFG
from helpers.models import TINY_ARCH, tiny_backbone_cfg
from mmvitdyn.engine import layer_decay_scale

LR, WD, RATE = 1e-3, 0.05, 0.5


def optimizer_of(model, rate=RATE, **paramwise):
    constructor = OPTIM_WRAPPER_CONSTRUCTORS.build(
        dict(
            type='LayerDecayOptimWrapperConstructor',
            optim_wrapper_cfg=dict(optimizer=dict(type='AdamW', lr=LR, weight_decay=WD)),
            paramwise_cfg=dict(layer_decay_rate=rate, **paramwise)))
    return constructor(model).optimizer


def settings(model, optimizer):
    """Parameter name -> (lr, weight decay) as the optimiser has them."""
    by_id = {
        id(p): (group['lr'], group['weight_decay'])
        for group in optimizer.param_groups
        for p in group['params']
    }
    return {name: by_id[id(p)] for name, p in model.named_parameters() if id(p) in by_id}


def build_from_config(path, **options):
    cfg = Config.fromfile(path)
    cfg.merge_from_dict(options)
    init_default_scope(cfg.default_scope)
    return MODELS.build(cfg.model)


def test_layer_decay_rule():
    assert layer_decay_scale(4, 5, 0.5) == 1.0
    assert layer_decay_scale(0, 5, 0.5) == 0.5**4
    assert layer_decay_scale(2, 5, 1.0) == 1.0
    with pytest.raises(ValueError, match='depth=5'):
        layer_decay_scale(5, 5, 0.5)


def test_classifier_depths_and_no_decay():
    init_default_scope('mmpretrain')
    model = MODELS.build(
        dict(
            type='ImageClassifier',
            backbone=tiny_backbone_cfg('ViT'),
            head=dict(type='LinearClsHead', num_classes=3, in_channels=TINY_ARCH['embed_dims'])))
    got = settings(model, optimizer_of(model))
    assert len(got) == len(list(model.parameters()))
    # 3 blocks -> depths 0 (embeddings) .. 4 (final norm, head): lr x 0.5^(4 - depth)
    assert got['backbone.patch_embed.proj.weight'] == (pytest.approx(LR * RATE**4), WD)
    assert got['backbone.pos_embed'] == (pytest.approx(LR * RATE**4), 0.)
    assert got['backbone.cls_token'] == (pytest.approx(LR * RATE**4), 0.)
    assert got['backbone.blocks.0.mlp.fc1.weight'] == (pytest.approx(LR * RATE**3), WD)
    assert got['backbone.blocks.2.attn.qkv.weight'] == (pytest.approx(LR * RATE), WD)
    assert got['backbone.blocks.2.attn.qkv.bias'] == (pytest.approx(LR * RATE), 0.)
    assert got['backbone.blocks.1.norm1.weight'] == (pytest.approx(LR * RATE**2), 0.)
    assert got['backbone.norm.weight'] == (LR, 0.)
    assert got['head.fc.weight'] == (LR, WD)


def test_detector_leaves_frozen_parameters_out():
    model = build_from_config(DYT_COCO_CFG)
    got = settings(model, optimizer_of(model))
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert set(got) == trainable and len(trainable) < len(list(model.parameters()))
    assert not any(n.endswith(('mlp.fc1.weight', 'qkv.weight')) for n in got)
    # 4 blocks: block i is depth i + 1 of 6.
    assert got['backbone.blocks.0.adapter.down.weight'] == (pytest.approx(LR * RATE**4), WD)
    assert got['backbone.blocks.3.dispatchers.mlp.gate.weight'] == (pytest.approx(LR * RATE), WD)
    assert got['backbone.blocks.1.attn.rel_pos_h'] == (pytest.approx(LR * RATE**3), 0.)
    assert got['neck.output_convs.0.conv.weight'] == (LR, WD)
    assert got['neck.output_convs.0.ln.weight'] == (LR, 0.)  # its LN2d
    assert got['roi_head.mask_head.conv_logits.weight'] == (LR, WD)


def test_plain_vitdet_decays_every_depth():
    model = build_from_config(
        DYT_COCO_CFG, **{
            'model.backbone.dispatch': None,
            'model.backbone.adapter_cfg': None,
            'model.backbone.freeze_pretrained': False
        })
    got = settings(model, optimizer_of(model, rate=0.7))
    assert set(got) == {n for n, _ in model.named_parameters()}
    assert got['backbone.pos_embed'] == (pytest.approx(LR * 0.7**5), 0.)
    assert got['backbone.blocks.3.mlp.fc2.weight'] == (pytest.approx(LR * 0.7), WD)


def test_segmentor_depths():
    model = build_from_config(DYT_ADE_CFG, **{'model.backbone.freeze_pretrained': False})
    got = settings(model, optimizer_of(model, no_decay_keys=('decode_head.conv_seg', )))
    assert got['backbone.blocks.2.mlp.fc1.weight'] == (pytest.approx(LR * RATE**2), WD)
    assert got['backbone.blocks.2.adapter.up.weight'] == (pytest.approx(LR * RATE**2), WD)
    assert got['decode_head.bottleneck.conv.weight'] == (LR, WD)
    assert got['decode_head.conv_seg.weight'] == (LR, 0.)
    assert got['auxiliary_head.convs.0.conv.weight'] == (LR, WD)


def test_bad_configs():
    with pytest.raises(ValueError, match=r"keys \['custom_keys'\] are not supported"):
        optimizer_of(torch.nn.Linear(2, 2), custom_keys={})
    with pytest.raises(ValueError, match='layer_decay_rate must lie in'):
        optimizer_of(torch.nn.Linear(2, 2), rate=1.5)
    with pytest.raises(TypeError, match='Linear has none'):
        optimizer_of(torch.nn.Linear(2, 2))
