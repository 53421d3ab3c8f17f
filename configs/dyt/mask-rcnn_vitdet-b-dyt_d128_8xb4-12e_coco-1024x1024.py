# DyT on ViTDet (the paper's detection experiment): Mask R-CNN with a frozen ViT-B/16, MLP token
# dispatch at target rate 0.5 and adapters of d = 128, COCO 2017 instance segmentation at 1024x1024
# with large-scale jitter, 12 epochs. Evaluated with COCO bbox and segm mAP; the activation rates
# are logged next to them.
#   bash tools/dist_train.sh \
#       configs/dyt/mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_coco-1024x1024.py 8
#   bash tools/dist_test.sh \
#       configs/dyt/mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_coco-1024x1024.py CKPT 8
# Baselines: mask-rcnn_vitdet-b-adaptformer_d128_8xb4-12e_coco-1024x1024.py,
# mask-rcnn_vitdet-b-full-ft_8xb4-12e_coco-1024x1024.py; with the 4-expert MoE-adapter:
# mask-rcnn_vitdet-b-dyt-moe4_d128_8xb4-12e_coco-1024x1024.py.
_base_ = [
    '../_base_/models/mask-rcnn_dyt-vitdet-b-d128_simple-fpn.py',
    '../_base_/datasets/coco_instance_lsj_1024.py',
    '../_base_/schedules/adamw-step_12e_det.py',
    '../_base_/runtimes/mmdet.py',
]
default_hooks = dict(checkpoint=dict(interval=1, max_keep_ckpts=2))
