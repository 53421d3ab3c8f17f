# Baseline: AdaptFormer on ViTDet, i.e. DyT without token dispatch (every
# token through every block; adapters of d = 128 on the frozen ViT-B).
_base_ = ['./mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_coco-1024x1024.py']
model = dict(backbone=dict(dispatch=None))
