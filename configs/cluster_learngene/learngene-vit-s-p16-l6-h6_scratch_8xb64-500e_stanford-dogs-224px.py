# From-Scratch row of the review answer R4 (2) on Stanford Dogs: a plain ViT of
# the 6-layer DeiT-S descendant's shape (_base_/models/vit-s-p16-l6.py) with
# random weights, nothing from a learngene, and the same 500-epoch schedule (see
# learngene-vit-s-p16-l6-h6_deit-s-eps10_8xb64-500e_stanford-dogs-224px).
_base_ = [
    './_base_/models/vit-s-p16-l6.py',
    '../_base_/datasets/stanford-dogs_bs64_deit_224.py',
    './_base_/schedules/adamw_cosine_500e_bs512.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(head=dict(num_classes=120))
default_hooks = dict(logger=dict(interval=100), checkpoint=dict(interval=10, max_keep_ckpts=3))
