# DyT UperNet on ADE20K with the DINOv2 ViT-B/14:
# upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py with DINOv2's backbone options, weights and
# mean/std (../_base_/models/vit-families.py), 512 x 512 crops padded to 518 (a multiple of 14) and
# a 518 x 518 sliding window.
_base_ = [
    './upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py', '../_base_/models/vit-families.py'
]
model = dict(
    data_preprocessor={{_base_.dinov2_seg_preprocessor}},
    backbone={{_base_.dinov2_b14}},
    test_cfg=dict(crop_size=(518, 518)))
