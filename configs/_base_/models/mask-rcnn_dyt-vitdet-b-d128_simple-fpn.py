# ViTDet (Li et al., 2022): Mask R-CNN on a plain ViT-B/16, here adapted by
# DyT: the plain ViTDet of mask-rcnn_vitdet-b_simple-fpn.py (weights, input
# normalisation, neck and heads are its) with the ViT-B frozen, MLP token
# dispatch at target rate 0.5 and an adapter of d = 128 (the paper's
# detection setting) in every block.
_base_ = ['./mask-rcnn_vitdet-b_simple-fpn.py']

model = dict(
    type='DyTMaskRCNN',
    rate_loss_weight=2.0,  # detection losses + 2 * L_rate
    backbone=dict(
        type='DyTViTDet',
        dispatch='mlp',
        target_rate=0.5,
        adapter_cfg=dict(bottleneck=128, scale=0.1, dropout=0.1, num_experts=1),
        freeze_pretrained=True))

custom_hooks = [dict(type='DispatchRateHook')]
