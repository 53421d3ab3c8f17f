# Your own image classification data at 224 with the transforms of DyT's
# VTAB-1K recipe (PIL bicubic resize to 224x224, no augmentation, as the
# public main_vtab.py) and 64 images per GPU, read by mmpretrain's
# CustomDataset (here the variant whose errors name an unreadable file and a
# label outside the classes). The VTAB-1K tasks (vtab1k_bs64_224.py) are this
# base with their list files. Two layouts, chosen by ann_file
# (docs/finetune_custom_data.md):
#   - ImageFolder (ann_file='', the default): data_root holds one folder per
#     class, e.g. data/custom/train/<class>/<image>; the classes are the
#     folder names, sorted, and a label is a class's index;
#   - list file: ann_file (under data_root) holds "relative/path label"
#     lines, labels 0..num_classes-1; give the class names as
#     metainfo=dict(classes=(...)).
# The dataloaders below are built when this file is read, so a config of
# your own sets the root in each (a changed variable does not reach them):
#
#   train_dataloader = dict(dataset=dict(data_root='data/my_set/train'))
#   val_dataloader = dict(dataset=dict(data_root='data/my_set/val'))
#   test_dataloader = val_dataloader
#
# The ImageNet statistics below serve models without a data_preprocessor of
# their own; a model whose checkpoint expects others sets
# model.data_preprocessor, which the Runner uses instead (the DyT model base
# does, for the in21k ViT's mean = std = 127.5).
dataset_type = 'FileCheckedCustomDataset'
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
    dataset=dict(type=dataset_type, data_root='data/custom/train', ann_file='', pipeline=pipeline),
    sampler=dict(type='DefaultSampler', shuffle=True),
)
val_dataloader = dict(
    batch_size=64,
    num_workers=4,
    dataset=dict(type=dataset_type, data_root='data/custom/val', ann_file='', pipeline=pipeline),
    sampler=dict(type='DefaultSampler', shuffle=False),
)
val_evaluator = dict(type='Accuracy', topk=(1, ))

test_dataloader = val_dataloader
test_evaluator = val_evaluator
