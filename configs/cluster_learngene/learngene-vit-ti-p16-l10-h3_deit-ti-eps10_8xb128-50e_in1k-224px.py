# 10 layers (learngene layers 0-9), omega = 1: 3 heads of 64 per layer.
_base_ = ['./learngene-vit-ti-p16-l12-h3_deit-ti-eps10_8xb128-50e_in1k-224px.py']
model = dict(backbone=dict(arch=dict(num_layers=10)))
