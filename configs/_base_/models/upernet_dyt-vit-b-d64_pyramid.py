# The DyT UperNet model of the public DyT segmentation code: the DyTViT of
# upernet_dyt-vit-b-d64_mln.py with the outputs of blocks 3, 5, 7, 11 (no
# final norm) made a pyramid inside the backbone (x4, x2, x1, x0.5; 768
# channels, no norm), no neck, UPerHead with 768 channels and the auxiliary
# head on the x1 level. The task config that runs it and what it follows:
# ../../dyt/upernet_vit-b-p16-dyt_d64_pyramid_8xb2-160k_ade20k-512x512.py.
_base_ = ['./upernet_dyt-vit-b-d64_mln.py']
model = dict(
    backbone=dict(
        out_indices=(3, 5, 7, 11),
        final_norm=False,
        pyramid=dict(type='RescalePyramid', rescales=(4, 2, 1, 0.5), norm_cfg=None)),
    neck=None,
    decode_head=dict(in_channels=[768] * 4, channels=768),
    auxiliary_head=dict(in_channels=768, in_index=2))
