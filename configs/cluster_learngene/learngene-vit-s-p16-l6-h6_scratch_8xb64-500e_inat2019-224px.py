# From-Scratch on iNaturalist 2019 at 6 layers, a variant of Table 2's cell
# learngene-vit-s-p16-l12-h6_scratch_8xb64-500e_inat2019-224px (12 layers, as
# the authors train it): a plain ViT of the 6-layer DeiT-S descendant's shape
# (_base_/models/vit-s-p16-l6.py) with random weights, nothing from a
# learngene, and the same 500-epoch schedule.
_base_ = [
    './_base_/models/vit-s-p16-l6.py',
    '../_base_/datasets/inat2019_bs64_deit_224.py',
    './_base_/schedules/adamw_cosine_500e_bs512.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(head=dict(num_classes=1010))
default_hooks = dict(logger=dict(interval=100), checkpoint=dict(interval=10, max_keep_ckpts=3))
