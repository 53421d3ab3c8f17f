# The demo's dense model: a small ViT trained from scratch on scikit-learn's
# digits (1,797 real hand-written digits upsampled to 32x32), on the CPU.
_base_ = [
    '../_base_/models/vit-mini-p4_32px.py',
    '../_base_/datasets/digits_bs32_32px.py',
    '../_base_/schedules/adamw_cosine_20e.py',
    '../_base_/runtimes/mmpretrain.py',
]
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=10),
    checkpoint=dict(type='CheckpointHook', interval=5, max_keep_ckpts=2, save_best='auto'))
