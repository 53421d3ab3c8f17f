# The public-code DyT UperNet of upernet_vit-b-p16-dyt_d64_pyramid_8xb2-160k_ade20k-512x512.py
# (pyramid inside the backbone, no neck) shrunk to the generated ADE20K-layout shapes: the
# mmseg-style upernet_vit-mini-p16-dyt_mln_1xb4-400i_ade-shapes-128px.py with the changes that
# config makes to its mmseg-style base, so the two differ only in how the maps reach UPerHead: every
# block's map, without the final norm, to the pyramid (x4, x2, x1, x0.5 of the 8x8 grid) and the
# auxiliary head on the x1 level.
_base_ = ['./upernet_vit-mini-p16-dyt_mln_1xb4-400i_ade-shapes-128px.py']
model = dict(
    backbone=dict(
        final_norm=False,
        pyramid=dict(type='RescalePyramid', rescales=(4, 2, 1, 0.5), norm_cfg=None)),
    neck=None,
    auxiliary_head=dict(in_index=2))
