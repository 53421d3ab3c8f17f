# The demo's DyT-top-K as the DyT authors' review ran it: the digits DyT run
# with the token dispatchers replaced by the soft top-K of Conditional
# Adapters (CoDA, Lei et al. 2023), as
# vit-b-p16-dyt-soft-topk_d64_8xb128-100e_cifar100-224px.py does on
# CIFAR-100. Every dispatcher keeps the round(0.5 * 64) = 32 patch tokens with
# the largest gate logits (r = target_rate = 0.5) and scales their MLP outputs
# by CoDA's soft top-k weights lambda, in training and at inference; no rate
# loss. The hard top-k with DyT's straight-through gradient is
# vit-mini-p4-dyt-topk_1xb32-8e_digits-32px.py.
_base_ = ['./vit-mini-p4-dyt_1xb32-8e_digits-32px.py']
model = dict(
    rate_loss_weight=0.0,  # a fixed count needs no rate loss
    backbone=dict(
        dispatcher_cfg=dict(
            mode='soft_topk',
            gumbel=False,  # CoDA's operator is deterministic
            epsilon=0.1,  # our choice, as in the CIFAR-100 config: the review gives none
            solver='coda')))  # CoDA's 20 dual rounds with its epsilon-scaling
