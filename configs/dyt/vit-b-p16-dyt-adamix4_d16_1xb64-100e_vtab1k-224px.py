# DyT-AdaMix (4 experts, one shared up-projection, a consistency loss of
# weight 1 between two dynamic passes, averaged at inference: AdaMix's
# published training; see vit-b-p16-dyt-adamix4_d64_8xb128-100e_cifar100-224px.py)
# on VTAB-1K, next to the MoE-adapter's vit-b-p16-dyt-moe4_d16_1xb64-100e_vtab1k-224px.py.
# The review compares AdaMix on full-data image and video sets at d = 64:
# this VTAB-1K row (d = 16) has no paper number. 'cifar' task; other tasks:
# start from the task's config and pass --cfg-options model.consistency_loss_weight=1.0
# model.backbone.adapter_cfg.num_experts=4 model.backbone.adapter_cfg.mixing=adamix
_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
model = dict(
    consistency_loss_weight=1.0, backbone=dict(adapter_cfg=dict(num_experts=4, mixing='adamix')))
