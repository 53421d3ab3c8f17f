# AdaptFormer + EViT on CIFAR-100: the DyT CIFAR-100 run's frozen ViT-B/16 and
# d = 64, s = 0.1 adapters, no token dispatch, and EViT's reorganisation at
# blocks 4, 7 and 10 (indices 3, 6, 9) keeping 0.7 of the patch tokens (the
# EViT paper's ViT setting; 196 -> 138 + 1 fused -> 98 + 1 -> 70 + 1),
# 11.77 GFLOPs per image by get_flops.py. Not a paper setting: adapter, data
# and schedule stay those of the DyT run. The keep rate is 0.7 from the first
# iteration, as in EViT's fine-tuning recipe (its public finetune.sh:
# shrink_start_epoch 0, shrink_epochs 0), the recipe for starting from a
# pretrained ViT; the DyT authors state no warm-up. EViT's warm-up of training
# from scratch (run_code.sh) is the *-evit-warmup* config. Data, schedule and
# runtime: those of vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py.
_base_ = [
    '../_base_/models/adaptformer-vit-b-p16.py',
    '../_base_/datasets/cifar100_bs64_224.py',
    './_base_/schedules/adamw_cosine_100e_full-data.py',
    './_base_/default_runtime.py',
]
model = dict(
    data_preprocessor=dict(to_rgb=False),  # as the DyT CIFAR-100 config
    head=dict(num_classes=100),
    backbone=dict(token_reduction=dict(type='EViT', keep_rate=0.7, locations=(3, 6, 9), fuse=True)))
train_dataloader = dict(batch_size=128)
val_dataloader = dict(batch_size=128)
test_dataloader = val_dataloader
