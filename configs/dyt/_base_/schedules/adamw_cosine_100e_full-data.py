# DyT's full-data image schedule (CIFAR-100, SVHN, Food-101), as the public
# main_image.py / train_IN21K.sh run it: the VTAB-1K one with AdamW lr 4e-3
# (--blr 1e-3 x 1024 / 256) and weight decay 0.01 (still on every trainable
# parameter), 20 warm-up epochs and a half-cosine to 0 (main_image.py's
# --min_lr default), for a total batch of 1024 (8 GPUs x 128; auto_scale_lr
# rescales the lr for other totals when enabled).
_base_ = ['./adamw_cosine_100e_vtab1k.py']
optim_wrapper = dict(optimizer=dict(lr=4e-3, weight_decay=0.01))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, end=20, convert_to_iter_based=True),
    dict(
        type='CosineAnnealingLR',
        eta_min=0.0,
        by_epoch=True,
        begin=20,
        end=100,
        convert_to_iter_based=True)
]
auto_scale_lr = dict(base_batch_size=1024)
