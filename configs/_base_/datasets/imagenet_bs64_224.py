# ImageNet-1k at 224, 64 images per GPU: mmpretrain's DeiT/Swin recipe
# (bicubic RandomResizedCrop, flip, RandAugment, RandomErasing; test resize
# 256 + center crop 224). Mixup/CutMix belong to the model's train_cfg.
_base_ = ['mmpretrain::_base_/datasets/imagenet_bs64_swin_224.py']
