# Cluster-Learngene on DTD (a data set the authors added to Table 2 in their
# review answer R4 (2)) at 6 layers, a variant of Table 2's cell
# learngene-vit-s-p16-l12-h6_deit-s-eps10_8xb64-500e_dtd-224px (12 layers, as
# the authors train it): a 6-layer descendant of the DeiT-S learngene (eps =
# 10; learngene layers 0-5, omega = 1: 6 heads of 64, 384 wide), trained 500
# epochs at 224 on 8 GPUs x 64 images (8 iterations an epoch), as the table's
# other data sets are. The answer names no split: the full release and its
# standard split (../_base_/datasets/dtd_bs64_deit_224.py). The other methods'
# 6-layer variants on DTD change the initialisation only:
# learngene-vit-s-p16-l6-h6_scratch_*, *_deit-s-heuristic_*, *_deit-s-auto_*
# and *_tleg-aux-vit-s_* (same data set suffix).
_base_ = [
    './_base_/models/learngene-vit-s-p16.py',
    '../_base_/datasets/dtd_bs64_deit_224.py',
    './_base_/schedules/adamw_cosine_500e_bs512.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(backbone=dict(arch=dict(num_layers=6, omega=1)), head=dict(num_classes=47))
default_hooks = dict(logger=dict(interval=100), checkpoint=dict(interval=10, max_keep_ckpts=3))
