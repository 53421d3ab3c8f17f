# Full fine-tuning baseline: a plain ViT (no dispatch, no adapter) whose every
# weight trains, in mmpretrain's ImageClassifier, with the DyT recipe so only
# what trains differs (full fine-tuning often prefers a smaller lr; VPT and
# NOAH search it per task). VTAB-1K 'cifar'; another task: set its data root
# and class count as a task config does (vit-b-p16-dyt_d16_1xb64-100e_vtab1k-dtd-224px.py).
_base_ = [
    '../_base_/models/vit-b-p16.py',
    './_base_/schedules/adamw_cosine_100e_vtab1k.py',
    './_base_/default_runtime.py',
    '../_base_/datasets/vtab1k_bs64_224.py',
]
model = dict(head=dict(num_classes=100))
