# DyT on OpenAI CLIP's ViT-B/16 image tower for CIFAR-100: the ViT-B/16
# CIFAR-100 recipe with CLIP's backbone options, weights and mean/std
# (../_base_/models/vit-families.py).
_base_ = ['./vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py', '../_base_/models/vit-families.py']
model = dict(data_preprocessor={{_base_.clip_norm}}, backbone={{_base_.clip_b16}})
