# The downstream (CIFAR-100) schedule of the paper: the 50-epoch recipe run
# for 500 epochs, lr = 5e-4 x 512 / 512 for a total batch of 512, with the
# 10 warm-up epochs of the authors' downstream command (their README's
# train.py ... --epochs 500 --warmup-epochs 10; ImageNet's commands use 5).
_base_ = ['./adamw_cosine_50e_bs1024.py']
optim_wrapper = dict(optimizer=dict(lr=5e-4))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, end=10, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=10)
]
train_cfg = dict(max_epochs=500, val_interval=10)
auto_scale_lr = dict(base_batch_size=512)
