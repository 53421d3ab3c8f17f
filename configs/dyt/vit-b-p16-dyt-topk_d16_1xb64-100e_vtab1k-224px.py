# DyT top-K on VTAB-1K ('cifar' task; for another start from its DyT config
# and pass the settings below as --cfg-options): every dispatcher keeps exactly
# round(r * 196) = 98 patch tokens per image (r = target_rate = 0.5), chosen
# by the same linear gate (the DyT authors' review ablation); the rest is the
# DyT VTAB-1K run.
_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
model = dict(
    # A fixed count needs no rate loss ("no rate loss needed").
    rate_loss_weight=0.0,
    backbone=dict(dispatcher_cfg=dict(mode='topk')))
