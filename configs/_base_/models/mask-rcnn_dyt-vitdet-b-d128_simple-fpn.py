# ViTDet (Li et al., 2022): Mask R-CNN on a plain ViT-B/16, here adapted by
# DyT: the AdaptFormer ViTDet of mask-rcnn_adaptformer-vitdet-b-d128_simple-fpn.py
# (the plain ViTDet of mask-rcnn_vitdet-b_simple-fpn.py, frozen, adapter
# d = 128, the paper's detection setting) with MLP token dispatch at target
# rate 0.5 in every block.
_base_ = ['./mask-rcnn_adaptformer-vitdet-b-d128_simple-fpn.py']

model = dict(backbone=dict(type='DyTViTDet', dispatch='mlp', target_rate=0.5))
