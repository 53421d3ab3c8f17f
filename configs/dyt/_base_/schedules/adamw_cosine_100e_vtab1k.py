# DyT's VTAB-1K schedule: AdamW (lr 1e-3, weight decay 1e-4, no gradient
# clipping), linear warm-up for 10 epochs, cosine decay to 1e-5 at epoch 100,
# for a total batch of 64. With 1,000 training images an epoch is 16
# iterations (1,600 in all). Norms, biases and token embeddings keep no decay.
_base_ = ['../../../_base_/schedules/adamw_cosine_20e.py']
optim_wrapper = dict(optimizer=dict(lr=1e-3, weight_decay=1e-4), clip_grad=None)
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
train_cfg = dict(max_epochs=100, val_interval=10)
auto_scale_lr = dict(base_batch_size=64)
