# A descendant of the LeViT-192 learngene (eps = 10) with the ancestry's shape:
# omega = 1 (3 / 5 / 6 heads, filled from each block's head centroids by
# priority weight-sharing) and 4 / 4 / 4 blocks, fine-tuned 50 epochs on
# ImageNet-1k (the rebuttal's LeViT epochs) with the paper's recipe.
_base_ = [
    './_base_/models/learngene-levit-192.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    './_base_/schedules/adamw_cosine_50e_bs1024.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(backbone=dict(arch=dict(omega=1, depths=[4, 4, 4])))
# No weight decay on the attention biases either (as LeViT trains).
optim_wrapper = dict(paramwise_cfg=dict(custom_keys={'.attention_biases': dict(decay_mult=0.0)}))
# 8 GPUs x 128 images = the schedule's batch of 1024 (1,251 iterations an epoch).
train_dataloader = dict(batch_size=128)
default_hooks = dict(logger=dict(interval=100))
