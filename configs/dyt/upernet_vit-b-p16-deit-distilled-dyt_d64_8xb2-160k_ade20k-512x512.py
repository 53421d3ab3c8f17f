# DyT UperNet on ADE20K with the distilled DeiT-B/16:
# upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py with the distillation token (never
# dispatched; the maps are the patch tokens), DeiT's weights and mean/std
# (../_base_/models/vit-families.py).
_base_ = [
    './upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py', '../_base_/models/vit-families.py'
]
model = dict(data_preprocessor={{_base_.imagenet_norm}}, backbone={{_base_.deit_b16_distilled}})
