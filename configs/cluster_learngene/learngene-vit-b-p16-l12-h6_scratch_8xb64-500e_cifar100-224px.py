# From-Scratch baseline on CIFAR-100 (Table 2): a plain ViT of the 12-layer, 6-head descendant's
# shape (_base_/models/vit-b-p16-l12-h6.py) with random weights and nothing from the learngene,
# with the same 500-epoch schedule.
_base_ = [
    './_base_/models/vit-b-p16-l12-h6.py',
    '../_base_/datasets/cifar100_bs64_deit_224.py',
    './_base_/schedules/adamw_cosine_500e_bs512.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(head=dict(num_classes=100))
default_hooks = dict(logger=dict(interval=100), checkpoint=dict(interval=10, max_keep_ckpts=3))
