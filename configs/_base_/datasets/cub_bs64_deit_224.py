# CUB-200-2011 at 224 with the DeiT recipe's augmentation and ImageNet
# mean/std (the pipeline of imagenet_bs64_224.py) on mmpretrain's CUB: 5,994
# training and 5,794 test images. 64 images per GPU.
_base_ = ['./imagenet_bs64_224.py']

data_preprocessor = dict(num_classes=200)
train_dataloader = dict(dataset=dict(type='CUB', data_root='data/CUB_200_2011', split='train'))
val_dataloader = dict(dataset=dict(type='CUB', data_root='data/CUB_200_2011', split='test'))
test_dataloader = val_dataloader
