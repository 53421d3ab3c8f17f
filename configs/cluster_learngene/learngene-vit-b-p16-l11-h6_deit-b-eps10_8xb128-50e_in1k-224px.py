# 11 layers (learngene layers 0-10), omega = 2: 6 heads of 64 per layer.
_base_ = ['./learngene-vit-b-p16-l12-h12_deit-b-eps10_8xb128-50e_in1k-224px.py']
model = dict(backbone=dict(arch=dict(_delete_=True, num_layers=11, omega=2)))
