# DyT on UperNet with the MoE-adapter: 4 experts of d = 64 per block.
_base_ = ['./upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py']
model = dict(backbone=dict(adapter_cfg=dict(num_experts=4)))
