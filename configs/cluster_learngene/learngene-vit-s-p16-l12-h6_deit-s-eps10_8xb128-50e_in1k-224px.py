# A descendant of the DeiT-S learngene (eps = 10) with the ancestry's shape:
# 12 layers, omega = 1 (6 heads of 64 per layer, filled from each layer's head
# centroids by priority weight-sharing), fine-tuned 50 epochs on ImageNet-1k
# with the paper's recipe. The other DeiT-S descendants change the depth only.
_base_ = [
    './_base_/models/learngene-vit-s-p16.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    './_base_/schedules/adamw_cosine_50e_bs1024.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(backbone=dict(arch=dict(num_layers=12, omega=1)))
# 8 GPUs x 128 images = the schedule's batch of 1024 (1,251 iterations an epoch).
train_dataloader = dict(batch_size=128)
default_hooks = dict(logger=dict(interval=100))
