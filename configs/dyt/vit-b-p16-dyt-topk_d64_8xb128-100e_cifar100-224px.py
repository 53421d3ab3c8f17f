# DyT top-K on CIFAR-100, the ablation of the DyT authors' review ("DyT-top-K",
# reported on CIFAR-100): every dispatcher keeps exactly round(r * 196) = 98
# patch tokens per image (r = target_rate = 0.5), chosen by the same linear gate;
# everything else is the DyT CIFAR-100 run. The review replaced the dispatcher
# by the Conditional Adapter's soft top-K; here the forward mask is the hard
# top-k with DyT's straight-through sigmoid gradient (see TokenDispatcher).
_base_ = ['./vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py']
model = dict(
    # A fixed count needs no rate loss ("no rate loss needed").
    rate_loss_weight=0.0,
    backbone=dict(dispatcher_cfg=dict(mode='topk')))
