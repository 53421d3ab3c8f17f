# DyT UperNet on another data set in a few lines: the model, runtime and schedule bases of
# upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py with mmseg's own Pascal Context (59 classes)
# data config, 480x480 crops and an 80k-iteration schedule.
_base_ = [
    '../_base_/models/upernet_dyt-vit-b-d64_mln.py',
    'mmseg::_base_/datasets/pascal_context_59.py',
    '../_base_/runtimes/mmseg.py',
    '../_base_/schedules/adamw-poly_160k_seg.py',
]
crop_size = (480, 480)
model = dict(
    data_preprocessor=dict(size=crop_size),
    decode_head=dict(num_classes=59),
    auxiliary_head=dict(num_classes=59),
    test_cfg=dict(mode='slide', crop_size=crop_size, stride=(320, 320)))
train_dataloader = dict(batch_size=2)  # 8 GPUs x 2
train_cfg = dict(max_iters=80000, val_interval=8000)
param_scheduler = [  # the warm-up x poly product of the schedule base, over 80k
    dict(type='LinearLR', start_factor=1e-6, by_epoch=False, begin=0, end=1501),
    dict(type='PolyLR', eta_min=0.0, power=1.0, by_epoch=False, begin=0, end=80001)
]
