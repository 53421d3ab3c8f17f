# DyT UperNet on ADE20K with the MAE-pretrained ViT-B/16:
# upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py with MAE's weights and mean/std
# (../_base_/models/vit-families.py).
_base_ = [
    './upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py', '../_base_/models/vit-families.py'
]
model = dict(data_preprocessor={{_base_.imagenet_norm}}, backbone={{_base_.mae_b16}})
