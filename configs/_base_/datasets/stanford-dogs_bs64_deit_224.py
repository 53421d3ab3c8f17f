# Stanford Dogs (120 breeds; the release's 12,000 training and 8,580 test
# images) at 224 with the DeiT recipe's augmentation and ImageNet mean/std
# (the pipeline of imagenet_bs64_224.py). mmpretrain has no Stanford Dogs type:
# the images of the release (Images/<synset>-<breed>/*.jpg) are read with list
# files of "<file_list entry> <label - 1>" lines written from its
# train_list.mat / test_list.mat (see the data-root error), by the
# CustomDataset whose errors name unreadable files and labels outside
# 0..num_classes-1. 64 images per GPU.
_base_ = ['./imagenet_bs64_224.py']

num_classes = 120
data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(
    dataset=dict(
        _delete_=True,
        type='FileCheckedCustomDataset',
        data_root='data/stanford_dogs',
        data_prefix='Images',
        ann_file='meta/train.txt',
        num_classes=num_classes,
        pipeline={{_base_.train_pipeline}}))
val_dataloader = dict(
    dataset=dict(
        _delete_=True,
        type='FileCheckedCustomDataset',
        data_root='data/stanford_dogs',
        data_prefix='Images',
        ann_file='meta/test.txt',
        num_classes=num_classes,
        pipeline={{_base_.test_pipeline}}))
test_dataloader = val_dataloader
