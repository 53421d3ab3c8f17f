# Food-101 (mmpretrain's Food101: 75,750 training and 25,250 test images) with
# the plain augmentation of imagenet_bs64_rrc_224.py, as the public DyT
# main_image.py trains it. 64 images per GPU.
_base_ = ['./imagenet_bs64_rrc_224.py']

data_preprocessor = dict(num_classes=101)
train_dataloader = dict(dataset=dict(type='Food101', data_root='data/food-101', split='train'))
val_dataloader = dict(dataset=dict(type='Food101', data_root='data/food-101', split='test'))
test_dataloader = val_dataloader
