# DyT + ToMe on VTAB-1K: DyT with d = 8 adapters (MLP dispatch at r = 0.5,
# VTAB-1K recipe) and ToMe merging r = 10 tokens per block (matched FLOPs, see
# the AdaptFormer + ToMe config); dispatch gates the merged tokens. The 'cifar'
# task; for another start from its DyT config and pass the settings below as
# --cfg-options (ToMe alone also applies to a trained DyT checkpoint at test time).
_base_ = ['./vit-b-p16-dyt_d8_1xb64-100e_vtab1k-224px.py']
model = dict(backbone=dict(token_reduction=dict(type='ToMe', r=10)))
