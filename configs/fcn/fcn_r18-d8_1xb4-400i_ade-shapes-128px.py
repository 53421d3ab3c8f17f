# Stock mmseg FCN (dilated ResNet-18, random init) on the generated
# ADE20K-layout shapes: checks the segmentation data path and IoUMetric.
_base_ = [
    'mmseg::_base_/models/fcn_r50-d8.py',
    '../_base_/datasets/ade_shapes.py',
    '../_base_/runtimes/mmseg.py',
]
norm_cfg = dict(type='BN', requires_grad=True)
model = dict(
    pretrained=None,
    data_preprocessor=dict(size=(128, 128)),
    backbone=dict(depth=18, norm_cfg=norm_cfg),
    decode_head=dict(in_channels=512, channels=128, num_classes=5, norm_cfg=norm_cfg),
    auxiliary_head=dict(in_channels=256, channels=64, num_classes=5, norm_cfg=norm_cfg))
optim_wrapper = dict(
    type='OptimWrapper', optimizer=dict(type='SGD', lr=0.01, momentum=0.9, weight_decay=5e-4))
param_scheduler = [dict(type='PolyLR', eta_min=1e-4, power=0.9, begin=0, end=400, by_epoch=False)]
train_cfg = dict(type='IterBasedTrainLoop', max_iters=400, val_interval=200)
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=20, log_metric_by_epoch=False),
    checkpoint=dict(type='CheckpointHook', by_epoch=False, interval=200))
train_dataloader = dict(batch_size=4)
