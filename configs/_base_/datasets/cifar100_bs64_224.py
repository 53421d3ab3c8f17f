# CIFAR-100 upsampled from 32 to 224 for ViTs, 64 images per GPU. Inherits
# mmpretrain's CIFAR-100 set-up (data_root, CIFAR mean/std, images already
# RGB) and replaces its 32px pipelines.
_base_ = ['mmpretrain::_base_/datasets/cifar100_bs16.py']

train_pipeline = [
    dict(type='Resize', scale=224, interpolation='bicubic'),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='Resize', scale=224, interpolation='bicubic'),
    dict(type='PackInputs'),
]

train_dataloader = dict(batch_size=64, dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(batch_size=64, dataset=dict(pipeline=test_pipeline))
test_dataloader = val_dataloader
