# DyT's Kinetics-400 schedule as train_video.sh (l. 19-32) and main_video.py run it:
# AdamW (default betas) on every trainable parameter, one group, weight decay 0.01
# (main_video.py l. 316); lr 5e-4 = --blr 1e-3 x 128 / 256 (main_video.py l. 302-305)
# for a total batch of 128 = 8 GPUs x 16 (auto_scale_lr rescales it for other totals
# when enabled); 2 warm-up epochs then a half-cosine to 0 (--min_lr 0), both per
# iteration (util/lr_sched.py); 12 epochs, evaluated after each (--eval_freq 1).
# mmengine's LinearLR needs a positive start (1e-3 x lr; the public warm-up starts
# at 0). fp16 autocast with a dynamic loss scale, as engine_finetune.py's
# torch.cuda.amp.autocast and NativeScaler: AmpOptimWrapper (a GPU run; on a CPU
# pass --cfg-options optim_wrapper.type=OptimWrapper).
optim_wrapper = dict(
    type='AmpOptimWrapper',
    loss_scale='dynamic',
    optimizer=dict(type='AdamW', lr=5e-4, betas=(0.9, 0.999), weight_decay=0.01))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, end=2, convert_to_iter_based=True),
    dict(
        type='CosineAnnealingLR',
        eta_min=0.0,
        by_epoch=True,
        begin=2,
        end=12,
        convert_to_iter_based=True)
]
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=12, val_begin=1, val_interval=1)
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')
auto_scale_lr = dict(base_batch_size=128)
