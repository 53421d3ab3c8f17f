"""The DyT detection and segmentation configs hold the paper's recipes and build."""
import copy

import pytest
from mmengine.registry import MODELS, init_default_scope

from helpers.configs import DYT_CONFIG_DIR, dyt_config
from helpers.dyt import assert_dyt_settings, dyt_param_names, rel_pos_names


def test_vitdet_coco_recipe():
    cfg = dyt_config('mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_coco-1024x1024.py')
    assert cfg.custom_imports == dict(imports=['mmvitdyn'], allow_failed_imports=False)
    assert cfg.default_scope == 'mmdet' and cfg.model.type == 'DyTMaskRCNN'
    backbone = cfg.model.backbone
    assert (backbone.type, backbone.arch, backbone.dispatch) == ('DyTViTDet', 'base', 'mlp')
    assert (backbone.window_size, tuple(backbone.global_indices)) == (14, (2, 5, 8, 11))
    assert backbone.adapter_cfg.bottleneck == 128 and backbone.freeze_pretrained
    assert backbone.init_cfg.type == 'Pretrained'
    assert cfg.model.neck.type == 'SimpleFPN' and cfg.model.rate_loss_weight == 2.0
    assert cfg.train_cfg.max_epochs == 12
    assert set(cfg.val_evaluator.metric) == {'bbox', 'segm'}
    assert cfg.optim_wrapper.constructor == 'LayerDecayOptimWrapperConstructor'
    assert any(t.get('crop_size') == (1024, 1024) for t in cfg.train_dataloader.dataset.pipeline)
    assert {'type': 'DispatchRateHook'} in cfg.custom_hooks


@pytest.mark.parametrize('name,dispatch,adapter,frozen', [
    ('mask-rcnn_vitdet-b-dyt-moe4_d128_8xb4-12e_coco-1024x1024.py', 'mlp',
     dict(bottleneck=128, num_experts=4), True),
    ('mask-rcnn_vitdet-b-adaptformer_d128_8xb4-12e_coco-1024x1024.py', None,
     dict(bottleneck=128, num_experts=1), True),
    ('mask-rcnn_vitdet-b-full-ft_8xb4-12e_coco-1024x1024.py', None, None, False),
    ('upernet_vit-b-p16-dyt-moe4_d64_8xb2-160k_ade20k-512x512.py', 'mlp',
     dict(bottleneck=64, num_experts=4), True),
    ('upernet_vit-b-p16-adaptformer_d64_8xb2-160k_ade20k-512x512.py', None,
     dict(bottleneck=64, num_experts=1), True),
    ('upernet_vit-b-p16-full-ft_8xb2-160k_ade20k-512x512.py', None, None, False),
])
def test_variants(name, dispatch, adapter, frozen):
    assert_dyt_settings(dyt_config(name).model.backbone, dispatch, adapter, frozen)


def test_upernet_ade20k_recipe():
    cfg = dyt_config('upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py')
    assert cfg.default_scope == 'mmseg' and cfg.model.type == 'DyTEncoderDecoder'
    backbone = cfg.model.backbone
    assert backbone.type == 'DyTViT' and tuple(backbone.out_indices) == (3, 5, 7, 11)
    assert backbone.out_type == 'featmap' and backbone.adapter_cfg.bottleneck == 64
    assert cfg.model.neck.type == 'MultiLevelNeck'
    assert cfg.model.decode_head.type == 'UPerHead' and cfg.model.decode_head.num_classes == 150
    assert cfg.model.auxiliary_head.type == 'FCNHead'
    assert cfg.model.auxiliary_head.loss_decode.loss_weight == 0.4
    assert cfg.model.test_cfg.mode == 'slide' and tuple(cfg.model.test_cfg.crop_size) == (512, 512)
    assert cfg.crop_size == (512, 512) and cfg.train_dataloader.batch_size == 2  # x 8 GPUs
    assert cfg.train_cfg.max_iters == 160000
    assert (cfg.optim_wrapper.optimizer.type, cfg.optim_wrapper.optimizer.lr) == ('AdamW', 1e-3)
    assert [s.type for s in cfg.param_scheduler] == ['LinearLR', 'PolyLR']


def test_a_new_data_set_is_a_few_lines():
    cfg = dyt_config('upernet_vit-b-p16-dyt_d64_8xb2-80k_pascal-context-59-480x480.py')
    assert cfg.train_dataloader.dataset.type == 'PascalContextDataset59'
    assert cfg.model.decode_head.num_classes == 59 and cfg.model.backbone.type == 'DyTViT'
    assert cfg.train_cfg.max_iters == 80000
    text = (DYT_CONFIG_DIR /
            'upernet_vit-b-p16-dyt_d64_8xb2-80k_pascal-context-59-480x480.py').read_text()
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith('#')]
    assert len(lines) < 25


@pytest.mark.parametrize('name', [
    'mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_coco-1024x1024.py',
    'upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py'
])
def test_full_size_models_build_with_only_dyt_parts_trainable(name):
    cfg = copy.deepcopy(dyt_config(name))
    cfg.model.backbone.init_cfg = None
    init_default_scope(cfg.default_scope)
    model = MODELS.build(cfg.model)
    trainable = {n for n, p in model.backbone.named_parameters() if p.requires_grad}
    expected = dyt_param_names(12)  # ViT-B
    if 'vitdet' in name:
        expected |= rel_pos_names(12)
    assert trainable == expected


@pytest.mark.parametrize('name,model_type,backbone_type,adapted', [
    ('mask-rcnn_vitdet-b-adaptformer_d128_8xb4-12e_coco-1024x1024.py', 'DyTMaskRCNN',
     'AdapterViTDet', True),
    ('mask-rcnn_vitdet-b-full-ft_8xb4-12e_coco-1024x1024.py', 'MaskRCNN', 'ViTDet', False),
    ('upernet_vit-b-p16-adaptformer_d64_8xb2-160k_ade20k-512x512.py', 'DyTEncoderDecoder',
     'AdapterViT', True),
    ('upernet_vit-b-p16-full-ft_8xb2-160k_ade20k-512x512.py', 'EncoderDecoder', 'ViT', False),
])
def test_baselines_are_their_methods(name, model_type, backbone_type, adapted):
    """AdaptFormer is the adapter ViT (in the DyT model, its rate term 0), full
    fine-tuning the plain ViT in mmdet's / mmseg's own model (no rate loss or rate
    hook); AdaptFormer trains its adapters (and ViTDet's relative-position
    tables), full fine-tuning every backbone parameter."""
    cfg = copy.deepcopy(dyt_config(name))
    assert (cfg.model.type, cfg.model.backbone.type) == (model_type, backbone_type)
    if not adapted:
        assert 'rate_loss_weight' not in cfg.model
        assert 'DispatchRateHook' not in [h['type'] for h in cfg.get('custom_hooks', [])]
    cfg.model.backbone.init_cfg = None
    init_default_scope(cfg.default_scope)
    backbone = MODELS.build(cfg.model).backbone
    assert type(backbone).__name__ == backbone_type
    trainable = {n for n, p in backbone.named_parameters() if p.requires_grad}
    if adapted:
        expected = dyt_param_names(12, dispatched=())
        if 'vitdet' in name:
            expected |= rel_pos_names(12)
    else:
        expected = {n for n, _ in backbone.named_parameters()}
    assert trainable == expected
