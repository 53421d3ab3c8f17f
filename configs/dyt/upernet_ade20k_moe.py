# DyT on UperNet with the MoE-adapter: 4 experts of d = 64 per block.
_base_ = ['./upernet_ade20k.py']
model = dict(backbone=dict(adapter_cfg=dict(num_experts=4)))
