# DyT's full-data image schedule (CIFAR-100, SVHN, Food-101): the VTAB-1K one
# with AdamW lr 4e-3, weight decay 0.01 and 20 warm-up epochs, for a total
# batch of 1024 (8 GPUs x 128; auto_scale_lr rescales the lr for other totals
# when enabled).
_base_ = ['./adamw_cosine_100e_vtab1k.py']
optim_wrapper = dict(optimizer=dict(lr=4e-3, weight_decay=0.01))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, end=20, convert_to_iter_based=True),
    dict(
        type='CosineAnnealingLR',
        eta_min=1e-5,
        by_epoch=True,
        begin=20,
        end=100,
        convert_to_iter_based=True)
]
train_cfg = dict(val_interval=5)
auto_scale_lr = dict(base_batch_size=1024)
