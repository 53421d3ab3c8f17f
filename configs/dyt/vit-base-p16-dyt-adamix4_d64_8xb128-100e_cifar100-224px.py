# DyT-AdaMix on CIFAR-100, the DyT authors' review comparison (d = 64): the
# MoE-adapter replaced by AdaMix (Wang et al. 2022) with 4 experts. In
# training each forward of each block draws one of the 4 down-projections
# and one of the 4 up-projections (no router; the whole batch shares them);
# at inference the experts are averaged into one adapter, so the cost is one
# adapter's. Everything else is the DyT CIFAR-100 run. Differences from
# AdaMix's own recipe: no consistency loss between two routings and no
# shared projections (the review describes neither); DyT's complete and
# dynamic passes each draw their own pair, and its distillation term ties
# them. The experts live in stacked tensors, so AdamW also decays (and
# moves by momentum) the experts a step did not draw, which AdaMix's
# separate modules skip.
_base_ = ['./vit-base-p16-dyt_d64_8xb128-100e_cifar100-224px.py']
model = dict(backbone=dict(adapter_cfg=dict(num_experts=4, mixing='adamix')))
