# 6 layers (learngene layers 0-5), omega = 1: 6 heads of 64 per layer.
_base_ = ['./learngene-vit-s-p16-l12-h6_deit-s-eps10_8xb128-50e_in1k-224px.py']
model = dict(backbone=dict(arch=dict(num_layers=6)))
