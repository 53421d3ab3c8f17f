# Baseline: plain ViTDet, every backbone weight fine-tuned (no adapters, no
# dispatch), with ViTDet's layer-wise lr decay of 0.7 over the 12 blocks; the
# data, schedule and runtime of mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_coco-1024x1024.py.
_base_ = [
    '../_base_/models/mask-rcnn_vitdet-b_simple-fpn.py',
    '../_base_/datasets/coco_instance_lsj_1024.py',
    '../_base_/schedules/adamw-step_12e_det.py',
    '../_base_/runtimes/mmdet.py',
]
default_hooks = dict(checkpoint=dict(interval=1, max_keep_ckpts=2))
optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.7))
