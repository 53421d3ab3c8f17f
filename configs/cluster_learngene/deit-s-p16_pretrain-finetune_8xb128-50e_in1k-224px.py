# Pretraining-Finetuning baseline of the DeiT-S descendants: the whole ancestry
# (DeiT-S/16, pretrained on ImageNet-1k) fine-tuned with the descendants' 50-epoch
# recipe.
_base_ = [
    './_base_/models/deit-s-p16.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    './_base_/schedules/adamw_cosine_50e_bs1024.py',
    '../_base_/runtimes/mmpretrain.py',
]
# 8 GPUs x 128 images = the schedule's batch of 1024 (1,251 iterations an epoch).
train_dataloader = dict(batch_size=128)
default_hooks = dict(logger=dict(interval=100))
