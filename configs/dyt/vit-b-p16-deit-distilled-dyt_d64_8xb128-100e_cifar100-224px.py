# DyT on the distilled DeiT-B/16 for CIFAR-100: the ViT-B/16 CIFAR-100 recipe
# with the distillation token, DeiT's weights and mean/std
# (../_base_/models/vit-families.py). The backbone gives (class token,
# distillation token) and mmpretrain's DeiTClsHead predicts with the mean of
# its two linear heads, as DeiT does. There is no teacher here, so both heads
# train on the labels (DeiTClsHead warns that it cannot train the distillation).
_base_ = ['./vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py', '../_base_/models/vit-families.py']
model = dict(
    data_preprocessor={{_base_.imagenet_norm}},
    backbone={{_base_.deit_b16_distilled}},
    head=dict(type='DeiTClsHead'))
