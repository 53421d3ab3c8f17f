# The ViTDet DyT recipe of mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_coco-1024x1024.py shrunk to the
# generated COCO-format shapes (128x128 images) for tests and the CPU demo: a 4-block, 64-wide ViT
# with 16x16 patches (an 8x8 grid), 4x4 windows with global attention in blocks 1 and 3, MLP
# dispatch and adapters of d = 16, narrow heads. The backbone starts random and
# frozen on purpose (allow_random_frozen=True: no pretrained ViT of this shape exists); to start
# from a checkpoint of the same shape: --cfg-options model.backbone.init_cfg.type=Pretrained
# model.backbone.init_cfg.checkpoint=PATH model.backbone.allow_random_frozen=False.
_base_ = [
    '../_base_/models/mask-rcnn_dyt-vitdet-b-d128_simple-fpn.py',
    '../_base_/datasets/coco_shapes_instance.py',
    '../_base_/schedules/adamw-step_12e_det.py',
    '../_base_/runtimes/mmdet.py',
]
width = 64
model = dict(
    backbone=dict(
        arch=dict(
            _delete_=True,
            embed_dims=width,
            num_layers=4,
            num_heads=4,
            feedforward_channels=4 * width),
        img_size=128,
        window_size=4,
        global_indices=(1, 3),
        input_size=128,
        drop_path_rate=0.0,
        adapter_cfg=dict(bottleneck=16),
        init_cfg=None,
        allow_random_frozen=True),
    neck=dict(in_channels=width, out_channels=width),
    rpn_head=dict(in_channels=width, feat_channels=width),
    roi_head=dict(
        bbox_roi_extractor=dict(out_channels=width),
        bbox_head=dict(
            in_channels=width, conv_out_channels=width, fc_out_channels=256, num_classes=3),
        mask_roi_extractor=dict(out_channels=width),
        mask_head=dict(in_channels=width, conv_out_channels=width, num_classes=3)))
optim_wrapper = dict(type='OptimWrapper', optimizer=dict(lr=1e-3), clip_grad=dict(max_norm=10.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.01, by_epoch=False, begin=0, end=20),
    dict(type='MultiStepLR', by_epoch=True, begin=0, end=12, milestones=[8, 11], gamma=0.1)
]
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=5), checkpoint=dict(type='CheckpointHook', interval=6))
train_dataloader = dict(batch_size=4)
auto_scale_lr = dict(base_batch_size=4)
