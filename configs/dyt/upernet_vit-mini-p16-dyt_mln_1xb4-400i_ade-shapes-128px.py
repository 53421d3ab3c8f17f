# The DyT UperNet recipe of upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py shrunk to the
# generated ADE20K-layout shapes (128x128 images) for tests and the CPU demo: a 4-block, 64-wide ViT
# with 16x16 patches, every block's map to the neck, MLP dispatch and adapters of d = 16, narrow
# heads with BN, and a sliding window test of 96x96 crops (4 per image). The backbone starts
# random and frozen on purpose (allow_random_frozen=True: no pretrained ViT of this shape
# exists); to start from a checkpoint of the same shape: --cfg-options
# model.backbone.init_cfg.type=Pretrained model.backbone.init_cfg.checkpoint=PATH
# model.backbone.allow_random_frozen=False.
_base_ = [
    '../_base_/models/upernet_dyt-vit-b-d64_mln.py',
    '../_base_/datasets/ade_shapes.py',
    '../_base_/runtimes/mmseg.py',
    '../_base_/schedules/adamw-poly_160k_seg.py',
]
width = 64
norm_cfg = dict(type='BN', requires_grad=True)
model = dict(
    data_preprocessor=dict(size=(128, 128)),
    backbone=dict(
        arch=dict(
            _delete_=True,
            embed_dims=width,
            num_layers=4,
            num_heads=4,
            feedforward_channels=4 * width),
        img_size=128,
        out_indices=(0, 1, 2, 3),
        drop_path_rate=0.0,
        adapter_cfg=dict(bottleneck=16),
        init_cfg=None,
        allow_random_frozen=True),
    neck=dict(in_channels=[width] * 4, out_channels=width),
    decode_head=dict(in_channels=[width] * 4, channels=width, num_classes=5, norm_cfg=norm_cfg),
    auxiliary_head=dict(in_channels=width, channels=32, num_classes=5, norm_cfg=norm_cfg),
    test_cfg=dict(mode='slide', crop_size=(96, 96), stride=(64, 64)))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=20),
    dict(type='PolyLR', eta_min=0.0, power=1.0, by_epoch=False, begin=20, end=400)
]
train_cfg = dict(max_iters=400, val_interval=200)
default_hooks = dict(
    logger=dict(interval=20, log_metric_by_epoch=False),
    checkpoint=dict(by_epoch=False, interval=200))
train_dataloader = dict(batch_size=4)
