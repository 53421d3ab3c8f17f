# DyT on DINOv2 ViT-B/14 for CIFAR-100: the ViT-B/16 CIFAR-100 recipe with
# DINOv2's backbone options, weights and mean/std (../_base_/models/vit-families.py);
# 224 gives a 16 x 16 grid.
_base_ = ['./vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py', '../_base_/models/vit-families.py']
model = dict(data_preprocessor={{_base_.imagenet_norm}}, backbone={{_base_.dinov2_b14}})
