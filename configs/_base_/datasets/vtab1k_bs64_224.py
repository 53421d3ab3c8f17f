# VTAB-1K as prepared in the PEFT literature (NOAH, VPT, DyT): one folder per
# task, data/vtab-1k/<task>/, holding the images and list files of
# "relative/path label" lines. Models train on train800val200.txt (1,000
# images) and are evaluated on test.txt. Images are resized to 224x224
# (PIL bicubic) with no augmentation, as the public DyT main_vtab.py does. The
# ImageNet statistics below serve models without a data_preprocessor of
# their own; a model whose checkpoint expects others sets
# model.data_preprocessor, which the Runner uses instead (the DyT model base
# does, for the in21k ViT's mean = std = 127.5).
#
# A task config overrides the data root. The dataloaders below are built when
# this file is read, so changing ``vtab_task`` alone does not reach them; a
# task config sets the root in each:
#
#   _base_ = [..., '../_base_/datasets/vtab1k_bs64_224.py']
#   vtab_task = 'dtd'
#   data_root = f'data/vtab-1k/{vtab_task}'
#   train_dataloader = dict(dataset=dict(data_root=data_root))
#   val_dataloader = dict(dataset=dict(data_root=data_root))
#   test_dataloader = val_dataloader
#   model = dict(head=dict(num_classes=47))
#
# Classes per task: cifar 100, caltech101 102, dtd 47, oxford_flowers102 102,
# oxford_iiit_pet 37, svhn 10, sun397 397, patch_camelyon 2, eurosat 10,
# resisc45 45, diabetic_retinopathy 5, clevr_count 8, clevr_dist 6, dmlab 6,
# kitti 4, dsprites_loc 16, dsprites_ori 16, smallnorb_azi 18,
# smallnorb_ele 9.
# mmpretrain's CustomDataset, whose errors name an unreadable image or list file.
dataset_type = 'FileCheckedCustomDataset'
vtab_task = 'cifar'
data_root = f'data/vtab-1k/{vtab_task}'
data_preprocessor = dict(
    # RGB format normalization parameters
    mean=[123.675, 116.28, 103.53],
    std=[58.395, 57.12, 57.375],
    # convert image from BGR to RGB
    to_rgb=True,
)

pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=224, backend='pillow', interpolation='bicubic'),
    dict(type='PackInputs'),
]

train_dataloader = dict(
    batch_size=64,
    num_workers=4,
    dataset=dict(
        type=dataset_type, data_root=data_root, ann_file='train800val200.txt', pipeline=pipeline),
    sampler=dict(type='DefaultSampler', shuffle=True),
)
val_dataloader = dict(
    batch_size=64,
    num_workers=4,
    dataset=dict(type=dataset_type, data_root=data_root, ann_file='test.txt', pipeline=pipeline),
    sampler=dict(type='DefaultSampler', shuffle=False),
)
val_evaluator = dict(type='Accuracy', topk=(1, ))

test_dataloader = val_dataloader
test_evaluator = val_evaluator
