# Stock mmdet Mask R-CNN (ResNet-18 FPN, random init) on the generated
# COCO-format shapes: checks the detection data path and CocoMetric end to end.
_base_ = [
    'mmdet::_base_/models/mask-rcnn_r50_fpn.py',
    '../_base_/datasets/coco_shapes_instance.py',
    '../_base_/runtimes/mmdet.py',
]
model = dict(
    backbone=dict(depth=18, norm_cfg=dict(type='BN', requires_grad=True), init_cfg=None),
    neck=dict(in_channels=[64, 128, 256, 512]),
    roi_head=dict(bbox_head=dict(num_classes=3), mask_head=dict(num_classes=3)))
optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='SGD', lr=0.02, momentum=0.9, weight_decay=1e-4),
    clip_grad=dict(max_norm=10.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.01, by_epoch=False, begin=0, end=50),
    dict(type='MultiStepLR', by_epoch=True, begin=0, end=12, milestones=[8, 11], gamma=0.1)
]
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=12, val_interval=12)
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=5), checkpoint=dict(type='CheckpointHook', interval=6))
auto_scale_lr = dict(enable=False, base_batch_size=4)
train_dataloader = dict(batch_size=4)
