# DyT with the MoE-adapter (paper Sec. 3.4): 4 experts of d = 16, mixed per
# image by a router; the expert weights are merged before use, so the cost
# stays that of one adapter. VTAB-1K 'cifar'; other tasks: start from the
# task's config and pass --cfg-options model.backbone.adapter_cfg.num_experts=4
_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
model = dict(backbone=dict(adapter_cfg=dict(num_experts=4)))
