# DyT on ViTDet with the MoE-adapter: 4 experts of d = 128 per block, mixed
# per image (expert weights merged first, so the cost stays one adapter's).
_base_ = ['./vitdet_coco.py']
model = dict(backbone=dict(adapter_cfg=dict(num_experts=4)))
