# The downstream (CIFAR-100) schedule of the paper: the 50-epoch recipe run
# for 500 epochs, lr = 5e-4 x 512 / 512 for a total batch of 512.
_base_ = ['./adamw_cosine_50e_bs1024.py']
optim_wrapper = dict(optimizer=dict(lr=5e-4))
train_cfg = dict(max_epochs=500, val_interval=10)
auto_scale_lr = dict(base_batch_size=512)
