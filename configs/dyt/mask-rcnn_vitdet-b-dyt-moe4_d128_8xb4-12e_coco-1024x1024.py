# DyT on ViTDet with the MoE-adapter: 4 experts of d = 128 per block, mixed
# per image (expert weights merged first, so the cost stays one adapter's).
_base_ = ['./mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_coco-1024x1024.py']
model = dict(backbone=dict(adapter_cfg=dict(num_experts=4)))
