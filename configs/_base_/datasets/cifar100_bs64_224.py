# CIFAR-100 upsampled from 32 to 224 with the plain augmentation of the public
# DyT main_image.py, 64 images per GPU: the transforms of
# imagenet_bs64_rrc_224.py (RandomResizedCrop 224 + flip; test short side to
# 256 + CenterCrop 224, bicubic, PIL) on mmpretrain's CIFAR100, whose images
# are arrays already in memory (no loading step) and already RGB (its
# data_preprocessor has to_rgb=False; a model with its own preprocessor must
# say the same). Inherits mmpretrain's CIFAR-100 set-up (data_root, CIFAR
# mean/std) and replaces its 32px pipelines.
_base_ = ['mmpretrain::_base_/datasets/cifar100_bs16.py']

train_pipeline = [
    dict(type='RandomResizedCrop', scale=224, backend='pillow', interpolation='bicubic'),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='ResizeEdge', scale=256, edge='short', backend='pillow', interpolation='bicubic'),
    dict(type='CenterCrop', crop_size=224),
    dict(type='PackInputs'),
]

train_dataloader = dict(batch_size=64, dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(batch_size=64, dataset=dict(pipeline=test_pipeline))
test_dataloader = val_dataloader
