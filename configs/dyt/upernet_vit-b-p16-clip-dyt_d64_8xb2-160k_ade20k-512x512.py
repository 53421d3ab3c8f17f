# DyT UperNet on ADE20K with OpenAI CLIP's ViT-B/16 image tower:
# upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py with CLIP's backbone options, weights and
# mean/std (../_base_/models/vit-families.py).
_base_ = [
    './upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py', '../_base_/models/vit-families.py'
]
model = dict(data_preprocessor={{_base_.clip_norm}}, backbone={{_base_.clip_b16}})
