# DyT's VTAB-1K schedule, as the public main_vtab.py / train_vtab.sh run it:
# AdamW (lr 1e-3, betas (0.9, 0.999), weight decay 1e-4 on every trainable
# parameter: adapters, dispatchers and head, nothing exempted), no gradient
# clipping, for a total batch of 64 on one GPU; 100 epochs, a linear warm-up
# over the first 10 and a half-cosine to 1e-5, both updated every iteration.
# With 1,000 training images an epoch is 16 iterations (1,600 in all).
# Differences: the public warm-up starts at lr 0 and reaches 1e-3 at
# iteration 160; mmengine's LinearLR needs a positive start factor (1e-3
# here) and reaches the full rate one iteration earlier.
# The test split is evaluated after every epoch (the public --eval_freq 1),
# since the paper reports the best epoch (see ../default_runtime.py).
_base_ = ['../../../_base_/schedules/adamw_cosine_20e.py']
optim_wrapper = dict(
    _delete_=True,
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=1e-3, betas=(0.9, 0.999), weight_decay=1e-4))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, end=10, convert_to_iter_based=True),
    dict(
        type='CosineAnnealingLR',
        eta_min=1e-5,
        by_epoch=True,
        begin=10,
        end=100,
        convert_to_iter_based=True)
]
train_cfg = dict(max_epochs=100, val_interval=1)
auto_scale_lr = dict(base_batch_size=64)
