# DyT on ImageNet-1k: the model base's d = 64, s = 0.1 adapters and MLP
# dispatch at r = 0.5 on the in21k ViT-B/16, mmpretrain's DeiT-style data
# pipeline, and the paper's full-data recipe (lr 4e-3 for a total batch of
# 1024 = 8 GPUs x 128, 100 epochs, 20 warm-up), which the spec gives for the
# full-data image tasks; no separate ImageNet recipe is specified.
_base_ = [
    '../_base_/models/dyt-vit-base-p16.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    './_base_/schedules/adamw_cosine_100e_full-data.py',
    './_base_/default_runtime.py',
]
train_dataloader = dict(batch_size=128)
val_dataloader = dict(batch_size=128)
test_dataloader = val_dataloader
# 1,251 iterations an epoch.
default_hooks = dict(logger=dict(interval=100))
