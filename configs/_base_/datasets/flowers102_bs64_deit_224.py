# Oxford Flowers-102 at 224 with the DeiT recipe's augmentation and ImageNet
# mean/std: the ImageNet pipeline of imagenet_bs64_224.py (random resized
# crop, flip, RandAugment, random erasing 0.25; test resize 256 + centre
# crop 224) on mmpretrain's Flowers102, trained on train + val (2,040
# images) and evaluated on test (6,149). 64 images per GPU.
_base_ = ['./imagenet_bs64_224.py']

data_preprocessor = dict(num_classes=102)
train_dataloader = dict(
    dataset=dict(type='Flowers102', data_root='data/flowers102', split='trainval'))
val_dataloader = dict(dataset=dict(type='Flowers102', data_root='data/flowers102', split='test'))
test_dataloader = val_dataloader
