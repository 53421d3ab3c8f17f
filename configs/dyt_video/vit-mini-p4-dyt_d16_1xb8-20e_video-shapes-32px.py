# DyT on video, the public DyT video model in small (docs/video.md): each frame
# through a frozen 6-layer, 192-wide ViT with 4x4 patches, adapters (d=16) and
# MLP token dispatchers at a target activation rate of 0.5, the tokens of all
# frames attentively pooled; trained with DyT's loss (CE of the dynamic and the
# complete pass, distillation, rate loss x 2). The ViT is random here (a tiny
# set trains on CPU in minutes); the K400 / SSv2 configs load the IN-21k ViT-B.
#   python tools/dataset_converters/gen_video_shapes.py --out-dir data/video_shapes
#   python tools/train.py configs/dyt_video/vit-mini-p4-dyt_d16_1xb8-20e_video-shapes-32px.py
_base_ = [
    '../_base_/datasets/video-shapes_bs8_8x32px.py',
    '../_base_/runtimes/mmaction.py',
]
custom_imports = dict(imports=['mmvitdyn'], allow_failed_imports=False)
model = dict(
    type='DyTRecognizer3D',
    complete_loss=True,
    distill_loss=True,
    rate_loss_weight=2.0,
    backbone=dict(
        type='DyTVideoViT',
        vit=dict(
            type='DyTViT',
            arch=dict(embed_dims=192, num_layers=6, num_heads=6, feedforward_channels=768),
            img_size=32,
            patch_size=4,
            adapter_cfg=dict(bottleneck=16, scale=1.0, dropout=0.1),
            dispatch='mlp',
            target_rate=0.5,
            allow_random_frozen=True)),
    cls_head=dict(
        type='AttentivePoolingHead',
        num_classes={{_base_.num_classes}},
        in_channels=192,
        num_heads=6,
        topk=(1, ),
        average_clips='score'),
    data_preprocessor={{_base_.data_preprocessor}})

# AdamW as the public script; a learning rate for 48 clips, not blr x batch / 256.
optim_wrapper = dict(optimizer=dict(type='AdamW', lr=1e-3, weight_decay=0.01))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=True, end=1, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=0, by_epoch=True, begin=1)
]
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=20, val_begin=1, val_interval=5)
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')
default_hooks = dict(
    logger=dict(interval=2), checkpoint=dict(interval=5, save_best='acc/top1', rule='greater'))
# Logs the activation rates of validation and test next to the metrics.
custom_hooks = [dict(type='DispatchRateHook')]
