# DyT-AdaMix on Kinetics-400, the DyT authors' review comparison (d = 64): the
# MoE-adapter replaced by AdaMix with 4 experts (a random down-projection per forward
# and block, one shared up-projection, the experts averaged at inference) and AdaMix's
# consistency loss of weight 1, as the image config
# configs/dyt/vit-b-p16-dyt-adamix4_d64_8xb128-100e_cifar100-224px.py trains it (its
# header gives the sources). Everything else is
# vit-b-p16-dyt_d64_8xb16-12e_k400-8x16x1-224px.py.
_base_ = ['./vit-b-p16-dyt_d64_8xb16-12e_k400-8x16x1-224px.py']
model = dict(
    consistency_loss_weight=1.0,
    backbone=dict(vit=dict(adapter_cfg=dict(num_experts=4, mixing='adamix'))))
