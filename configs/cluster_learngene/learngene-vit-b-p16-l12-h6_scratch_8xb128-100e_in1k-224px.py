# From-Scratch baseline of Table 1: a plain ViT of the L12-H6 descendant's shape
# (_base_/models/vit-b-p16-l12-h6.py) with random weights, trained 100 epochs instead of 50 with
# the descendants' recipe.
_base_ = [
    './_base_/models/vit-b-p16-l12-h6.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    './_base_/schedules/adamw_cosine_50e_bs1024.py',
    '../_base_/runtimes/mmpretrain.py',
]
train_dataloader = dict(batch_size=128)
default_hooks = dict(logger=dict(interval=100))
train_cfg = dict(max_epochs=100)
