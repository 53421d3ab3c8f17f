# A 6-layer, 192-wide ViT with 4x4 patches for 32x32 inputs (8x8 = 64 patch
# tokens + class token): small enough to train on a laptop CPU in minutes.
custom_imports = dict(imports=['mmvitdyn'], allow_failed_imports=False)
model = dict(
    type='ImageClassifier',
    backbone=dict(
        type='ViT',
        arch=dict(embed_dims=192, num_layers=6, num_heads=6, feedforward_channels=768),
        img_size=32,
        patch_size=4,
        drop_path_rate=0.1,
        out_type='cls_token'),
    neck=None,
    head=dict(
        type='LinearClsHead',
        num_classes=10,
        in_channels=192,
        loss=dict(type='LabelSmoothLoss', label_smooth_val=0.1, mode='original'),
        init_cfg=dict(type='TruncNormal', layer='Linear', std=.02)))
