# DyT's Something-Something v2 schedule (train_video.sh l. 44-58): the Kinetics-400
# one over 50 epochs, evaluated every 5 (--eval_freq 5; main_video.py l. 369 also
# evaluates after the last, epoch 50).
_base_ = ['./adamw_cosine_12e_k400.py']
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, end=2, convert_to_iter_based=True),
    dict(
        type='CosineAnnealingLR',
        eta_min=0.0,
        by_epoch=True,
        begin=2,
        end=50,
        convert_to_iter_based=True)
]
train_cfg = dict(max_epochs=50, val_interval=5)
