# DyT-top-K (CoDA's soft top-K dispatcher, as in
# vit-b-p16-dyt-soft-topk_d64_8xb128-100e_cifar100-224px.py, whose comments
# give the settings' sources) on VTAB-1K ('cifar' task; for another start from
# its DyT config and pass the settings below as --cfg-options). The review
# reports DyT-top-K on CIFAR-100 only: this VTAB-1K row has no paper number.
# The rest is the DyT VTAB-1K run.
_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
model = dict(
    rate_loss_weight=0.0,  # a fixed count needs no rate loss
    backbone=dict(dispatcher_cfg=dict(mode='soft_topk', gumbel=False, epsilon=0.1, solver='coda')))
