# Baseline: AdaptFormer on UperNet, i.e. DyT without token dispatch.
_base_ = ['./upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py']
model = dict(backbone=dict(dispatch=None))
