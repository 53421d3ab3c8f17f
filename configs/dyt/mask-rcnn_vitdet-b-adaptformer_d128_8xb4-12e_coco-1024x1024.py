# Baseline: AdaptFormer on ViTDet (AdapterViTDet): the frozen ViT-B of the DyT
# config with its adapters of d = 128, no token dispatch (every token through
# every block), in DyTMaskRCNN, whose rate term is 0 without dispatch
# (../_base_/models/mask-rcnn_adaptformer-vitdet-b-d128_simple-fpn.py); the
# data, schedule and runtime of mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_coco-1024x1024.py.
_base_ = [
    '../_base_/models/mask-rcnn_adaptformer-vitdet-b-d128_simple-fpn.py',
    '../_base_/datasets/coco_instance_lsj_1024.py',
    '../_base_/schedules/adamw-step_12e_det.py',
    '../_base_/runtimes/mmdet.py',
]
default_hooks = dict(checkpoint=dict(interval=1, max_keep_ckpts=2))
