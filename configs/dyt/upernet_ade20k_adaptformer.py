# Baseline: AdaptFormer on UperNet, i.e. DyT without token dispatch.
_base_ = ['./upernet_ade20k.py']
model = dict(backbone=dict(dispatch=None))
