# CIFAR-100 at 224 with the DeiT recipe's augmentation, which the
# Cluster-Learngene downstream runs use for every data set (the public code
# trains them all with DeiT's transforms): the 32x32 images are randomly
# resized-cropped to 224 (bicubic), flipped, RandAugment-ed
# (rand-m9-mstd0.5-inc1) and randomly erased (p = 0.25); tests resize the short
# side to 256 and centre-crop 224. Normalised with ImageNet's mean/std, which
# the descendants' inherited weights expect. mmpretrain's CIFAR100 yields RGB
# arrays: no loading step and no BGR-to-RGB swap. 64 images per GPU.
_base_ = ['mmpretrain::_base_/datasets/cifar100_bs16.py']

rgb_mean = [123.675, 116.28, 103.53]
rgb_std = [58.395, 57.12, 57.375]
data_preprocessor = dict(mean=rgb_mean, std=rgb_std, to_rgb=False)

train_pipeline = [
    dict(type='RandomResizedCrop', scale=224, backend='pillow', interpolation='bicubic'),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(
        type='RandAugment',
        policies='timm_increasing',
        num_policies=2,
        total_level=10,
        magnitude_level=9,
        magnitude_std=0.5,
        hparams=dict(pad_val=[round(x) for x in rgb_mean], interpolation='bicubic')),
    dict(
        type='RandomErasing',
        erase_prob=0.25,
        mode='rand',
        min_area_ratio=0.02,
        max_area_ratio=1 / 3,
        fill_color=rgb_mean,
        fill_std=rgb_std),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='ResizeEdge', scale=256, edge='short', backend='pillow', interpolation='bicubic'),
    dict(type='CenterCrop', crop_size=224),
    dict(type='PackInputs'),
]

train_dataloader = dict(batch_size=64, dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(batch_size=64, dataset=dict(pipeline=test_pipeline))
val_evaluator = dict(type='Accuracy', topk=(1, 5))
test_dataloader = val_dataloader
test_evaluator = val_evaluator
