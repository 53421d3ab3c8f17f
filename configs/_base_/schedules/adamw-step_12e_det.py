# A 12-epoch ("1x") schedule for ViTDet, as DyT's detection experiment:
# AdamW (ViTDet's betas and weight decay 0.1), 250-iteration linear warm-up,
# lr x 0.1 at epochs 8 and 11, mixed precision. The rate 1e-4 is ViTDet's
# (which trains at batch 64); the DyT paper gives none. Only trainable
# parameters reach the optimiser; norms, biases, pos_embed and relative
# position tables are not decayed. All of these are ViTDet's own settings,
# kept deliberately: the DyT authors released no detection code, and the
# paper gives only ViTDet, 12 epochs and d = 128.
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=12, val_interval=12)
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')

optim_wrapper = dict(
    type='AmpOptimWrapper',
    optimizer=dict(type='AdamW', lr=1e-4, betas=(0.9, 0.999), weight_decay=0.1),
    constructor='LayerDecayOptimWrapperConstructor',
    paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.001, by_epoch=False, begin=0, end=250),
    dict(type='MultiStepLR', by_epoch=True, begin=0, end=12, milestones=[8, 11], gamma=0.1)
]
# Batch 32 (8 GPUs x 4): --auto-scale-lr rescales the rate for other sizes.
auto_scale_lr = dict(enable=False, base_batch_size=32)
