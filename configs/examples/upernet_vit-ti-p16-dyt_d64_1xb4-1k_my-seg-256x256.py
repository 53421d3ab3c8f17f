# The segmentation config of docs/finetune_custom_data.md on a CPU: the ImageNet-21k
# ViT-Ti/16 (192 wide) in place of ViT-B/16, UperNet 128 channels wide (the
# recipe's 512), 256 x 256 crops (the recipe's transforms at half the scale),
# 1,000 iterations of batch 4 (100 of warm-up, then poly decay), validation
# every 250. The data and the sliding-window test are the guide's config's.
_base_ = ['./upernet_vit-b-p16-dyt_d64_8xb2-160k_my-seg-512x512.py']
width = 192
crop_size = (256, 256)
model = dict(
    data_preprocessor=dict(size=crop_size),
    backbone=dict(arch='tiny', init_cfg=dict(checkpoint='checkpoints/vit-tiny-p16_in21k.pth')),
    neck=dict(in_channels=[width] * 4, out_channels=width),
    decode_head=dict(in_channels=[width] * 4, channels=128),
    auxiliary_head=dict(in_channels=width, channels=64),
    test_cfg=dict(crop_size=crop_size, stride=(171, 171)))
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations', reduce_zero_label=True),
    dict(type='RandomResize', scale=(1024, 256), ratio_range=(0.5, 2.0), keep_ratio=True),
    dict(type='RandomCrop', crop_size=crop_size, cat_max_ratio=0.75),
    dict(type='RandomFlip', prob=0.5),
    dict(type='PhotoMetricDistortion'),
    dict(type='PackSegInputs'),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(1024, 256), keep_ratio=True),
    dict(type='LoadAnnotations', reduce_zero_label=True),
    dict(type='PackSegInputs'),
]
train_dataloader = dict(batch_size=4, dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(pipeline=test_pipeline))
test_dataloader = val_dataloader
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-6, by_epoch=False, begin=0, end=100),
    dict(type='PolyLR', eta_min=0.0, power=1.0, by_epoch=False, begin=0, end=1000)
]
train_cfg = dict(max_iters=1000, val_interval=250)
default_hooks = dict(checkpoint=dict(interval=250))
