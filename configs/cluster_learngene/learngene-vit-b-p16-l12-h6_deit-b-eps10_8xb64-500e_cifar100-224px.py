# Downstream CIFAR-100 (at 224, with the DeiT augmentation of the paper's
# recipe): a descendant of the ImageNet DeiT-B learngene (eps = 10) with 12
# layers and omega = 2 (6 heads of 64), trained 500 epochs on 8 GPUs x 64
# images (98 iterations an epoch).
_base_ = [
    './_base_/models/learngene-vit-b-p16.py',
    '../_base_/datasets/cifar100_bs64_deit_224.py',
    './_base_/schedules/adamw_cosine_500e_bs512.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(backbone=dict(arch=dict(num_layers=12, omega=2)), head=dict(num_classes=100))
default_hooks = dict(logger=dict(interval=100), checkpoint=dict(interval=10, max_keep_ckpts=3))
