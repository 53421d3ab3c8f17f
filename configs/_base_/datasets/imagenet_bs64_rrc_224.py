# ImageNet-1k at 224 with the plain augmentation of the public DyT
# main_image.py (datasets/image_datasets.py), which its full-data runs
# (CIFAR-100, SVHN, Food-101) share: training RandomResizedCrop 224 (area
# 0.08..1, aspect 3/4..4/3, bicubic) + horizontal flip, nothing else (no
# RandAugment, erasing, mixup or label smoothing); test Resize of the short
# side to 256 (bicubic) + CenterCrop 224. PIL resizing, as torchvision's.
# 64 images per GPU. The ImageNet mean/std serve models without a
# data_preprocessor of their own (the DyT model base brings the in21k
# checkpoint's). Food-101 and SVHN bases inherit this file.
dataset_type = 'ImageNet'
data_preprocessor = dict(
    num_classes=1000,
    mean=[123.675, 116.28, 103.53],
    std=[58.395, 57.12, 57.375],
    to_rgb=True,  # images are read as BGR
)
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='RandomResizedCrop', scale=224, backend='pillow', interpolation='bicubic'),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='ResizeEdge', scale=256, edge='short', backend='pillow', interpolation='bicubic'),
    dict(type='CenterCrop', crop_size=224),
    dict(type='PackInputs'),
]
train_dataloader = dict(
    batch_size=64,
    num_workers=5,
    dataset=dict(
        type=dataset_type, data_root='data/imagenet', split='train', pipeline=train_pipeline),
    sampler=dict(type='DefaultSampler', shuffle=True),
)
val_dataloader = dict(
    batch_size=64,
    num_workers=5,
    dataset=dict(type=dataset_type, data_root='data/imagenet', split='val', pipeline=test_pipeline),
    sampler=dict(type='DefaultSampler', shuffle=False),
)
val_evaluator = dict(type='Accuracy', topk=(1, 5))
test_dataloader = val_dataloader
test_evaluator = val_evaluator
