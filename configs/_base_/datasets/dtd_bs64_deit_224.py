# Describable Textures (DTD, 47 classes) at 224 with the DeiT recipe's
# augmentation and ImageNet mean/std (the pipeline of imagenet_bs64_224.py) on
# mmpretrain's DTD (the release's imdb/imdb.mat, split 1): trained on train +
# val (3,760 images) and evaluated on test (1,880). 64 images per GPU.
_base_ = ['./imagenet_bs64_224.py']

data_preprocessor = dict(num_classes=47)
train_dataloader = dict(dataset=dict(type='DTD', data_root='data/dtd', split='trainval'))
val_dataloader = dict(dataset=dict(type='DTD', data_root='data/dtd', split='test'))
test_dataloader = val_dataloader
