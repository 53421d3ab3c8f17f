# A descendant of the Swin-T learngene (eps = 10) with omega = 1.5 in every
# stage: 2 / 4 / 8 / 16 heads of 32 (Swin-T: 3 / 6 / 12 / 24), each inheriting
# its head centroid's Q/K/V rows, W^O columns and relative-position-bias
# column; Swin-T's depths, widths, windows and FFNs (a stage's FFN groups as
# independent copies). Fine-tuned 50 epochs on ImageNet-1k with the paper's
# recipe; Swin-T's stochastic depth (0.2) and classifier.
_base_ = [
    'mmpretrain::_base_/models/swin_transformer/tiny_224.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    './_base_/schedules/adamw_cosine_50e_bs1024.py',
    '../_base_/runtimes/mmpretrain.py',
]
custom_imports = dict(imports=['mmvitdyn'], allow_failed_imports=False)
model = dict(
    backbone=dict(
        _delete_=True,
        type='LearngeneSwin',
        learngene='checkpoints/learngene_swin-t-p4-w7_eps10_in1k.pth',
        arch=dict(omega=1.5),
        img_size=224,
        drop_path_rate=0.2))
# No weight decay on the relative-position-bias tables either (as Swin trains).
optim_wrapper = dict(
    paramwise_cfg=dict(custom_keys={'.relative_position_bias_table': dict(decay_mult=0.0)}))
# 8 GPUs x 128 images = the schedule's batch of 1024 (1,251 iterations an epoch).
train_dataloader = dict(batch_size=128)
default_hooks = dict(logger=dict(interval=100))
