# Downstream CIFAR-100 (at 224, with the DeiT augmentation of the paper's
# recipe): the LeViT-192-shaped descendant of the ImageNet LeViT-192 learngene
# (eps = 10; omega = 1, 4 / 4 / 4 blocks) trained 500 epochs (the rebuttal's
# LeViT epochs) on 8 GPUs x 64 images (98 iterations an epoch).
_base_ = [
    './_base_/models/learngene-levit-192.py',
    '../_base_/datasets/cifar100_bs64_deit_224.py',
    './_base_/schedules/adamw_cosine_500e_bs512.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(backbone=dict(arch=dict(omega=1, depths=[4, 4, 4])), head=dict(num_classes=100))
# No weight decay on the attention biases either (as LeViT trains).
optim_wrapper = dict(paramwise_cfg=dict(custom_keys={'.attention_biases': dict(decay_mult=0.0)}))
default_hooks = dict(logger=dict(interval=100), checkpoint=dict(interval=10, max_keep_ckpts=3))
