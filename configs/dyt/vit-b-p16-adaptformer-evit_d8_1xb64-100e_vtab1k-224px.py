# AdaptFormer + EViT on VTAB-1K: the DyT authors' baseline of their review
# (bottleneck d = 8, W5) with the VTAB-1K recipe of the DyT configs, no token
# dispatch; EViT at blocks 4, 7, 10 (indices 3, 6, 9) keeping 0.7 of the patch
# tokens and fusing the rest (the EViT paper's ViT setting, 11.64 GFLOPs by
# get_flops.py; the review does not give its rate). The keep rate is 0.7 from
# the first iteration, as in EViT's fine-tuning recipe (its public
# finetune.sh: shrink_start_epoch 0, shrink_epochs 0); the DyT authors state no
# warm-up. The 'cifar' task; another task: set its data root and class count as
# a task config does.
_base_ = ['./vit-b-p16-adaptformer_d16_1xb64-100e_vtab1k-224px.py']
model = dict(
    backbone=dict(
        adapter_cfg=dict(bottleneck=8),
        token_reduction=dict(type='EViT', keep_rate=0.7, locations=(3, 6, 9), fuse=True)))
