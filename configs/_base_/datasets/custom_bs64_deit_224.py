# Data sets that mmpretrain has no type for, at 224 with the DeiT recipe's
# augmentation and ImageNet mean/std (the pipeline of imagenet_bs64_224.py),
# read by mmpretrain's CustomDataset (here the variant whose errors name an
# unreadable file and a label outside 0..num_classes-1), 64 images per GPU.
# A data set's base inherits this one and sets, in the datasets of
# train_dataloader and val_dataloader, data_root, data_prefix (the images'
# folder under it), ann_file (a list file of "relative/path label" lines;
# none for one folder per class) and num_classes, with
# data_preprocessor = dict(num_classes=...) and test_dataloader = val_dataloader
# (the dataloaders are built when this file is read: a changed variable does
# not reach them).
_base_ = ['./imagenet_bs64_224.py']

train_dataloader = dict(
    dataset=dict(
        _delete_=True, type='FileCheckedCustomDataset', pipeline={{_base_.train_pipeline}}))
val_dataloader = dict(
    dataset=dict(_delete_=True, type='FileCheckedCustomDataset', pipeline={{_base_.test_pipeline}}))
test_dataloader = val_dataloader
