# ViTDet (Li et al., 2022): Mask R-CNN on a plain ViT-B/16, here adapted by
# AdaptFormer: the plain ViTDet of mask-rcnn_vitdet-b_simple-fpn.py (weights,
# input normalisation, neck and heads are its) with the ViT-B frozen and an
# adapter of d = 128 (the paper's detection setting) in every block, no token
# dispatch, in DyTMaskRCNN, whose rate term is 0 without dispatch.
# mask-rcnn_dyt-vitdet-b-d128_simple-fpn.py adds DyT's dispatchers to it.
_base_ = ['./mask-rcnn_vitdet-b_simple-fpn.py']

model = dict(
    type='DyTMaskRCNN',
    rate_loss_weight=2.0,  # detection losses + 2 * L_rate
    backbone=dict(
        type='AdapterViTDet',
        adapter_cfg=dict(bottleneck=128, scale=0.1, dropout=0.1, num_experts=1),
        freeze_pretrained=True))

custom_hooks = [dict(type='DispatchRateHook')]
