# Baseline: AdaptFormer on ViTDet, i.e. DyT without token dispatch (every
# token through every block; adapters of d = 128 on the frozen ViT-B).
_base_ = ['./vitdet_coco.py']
model = dict(backbone=dict(dispatch=None))
