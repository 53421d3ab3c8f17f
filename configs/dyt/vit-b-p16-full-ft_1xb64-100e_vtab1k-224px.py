# Full fine-tuning baseline: a plain ViT (no dispatch, no adapter) whose every
# weight trains, in mmpretrain's ImageClassifier, with the DyT recipe so only
# what trains differs (full fine-tuning often prefers a smaller lr; VPT and
# NOAH search it per task). VTAB-1K 'cifar'; other tasks: start from the
# task's config and pass --cfg-options model.backbone.dispatch=None
# model.backbone.adapter_cfg=None model.backbone.freeze_pretrained=False
# (DyTViT with neither: the same model).
_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
model = dict(
    _delete_=True,
    type='ImageClassifier',
    data_preprocessor=dict(
        type='ClsDataPreprocessor', mean=[127.5] * 3, std=[127.5] * 3, to_rgb=True),
    backbone=dict(
        type='ViT',
        arch='base',
        img_size=224,
        patch_size=16,
        drop_path_rate=0.0,
        out_type='cls_token',
        init_cfg=dict(
            type='Pretrained', checkpoint='checkpoints/vit-base-p16_in21k.pth', prefix=None)),
    neck=None,
    head=dict(
        type='LinearClsHead',
        num_classes=100,
        in_channels=768,
        loss=dict(type='CrossEntropyLoss', loss_weight=1.0),
        init_cfg=dict(type='TruncNormal', layer='Linear', std=0.01)))
