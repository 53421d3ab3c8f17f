# DeiT-B/16 for ImageNet-1k classification with the paper's training recipe:
# label smoothing 0.1, Mixup 0.8, CutMix 1.0 (RandAugment and random erasing
# 0.25 are in the dataset base). The backbone starts from timm's DeiT-B
# checkpoint (deit_base_patch16_224-b5f2ef4d.pth loads directly): the
# ancestry of the ImageNet learngene and the Pretraining-Finetuning baseline.
custom_imports = dict(imports=['mmvitdyn'], allow_failed_imports=False)
model = dict(
    type='ImageClassifier',
    backbone=dict(
        type='ViT',
        arch='deit-b',
        img_size=224,
        patch_size=16,
        drop_path_rate=0.1,
        out_type='cls_token',
        init_cfg=dict(
            type='Pretrained', checkpoint='checkpoints/deit_base_patch16_224-b5f2ef4d.pth')),
    neck=None,
    head=dict(
        type='LinearClsHead',
        num_classes=1000,
        in_channels=768,
        loss=dict(type='LabelSmoothLoss', label_smooth_val=0.1, mode='original'),
        init_cfg=dict(type='TruncNormal', layer='Linear', std=.02)),
    train_cfg=dict(augments=[dict(type='Mixup', alpha=0.8),
                             dict(type='CutMix', alpha=1.0)]))
