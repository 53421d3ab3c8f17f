# DyT's segmentation schedule, as the public DyT code trains UperNet on ADE20K
# (dense_tasks/Segmentation: configs/beit/upernet/our_vit.py, tools/seg_train.sh):
# AdamW, lr 1e-3, betas (0.9, 0.999), weight decay 0.05 on every trainable
# parameter (no paramwise rule, no layer decay: mmengine's default
# constructor; the frozen weights get no gradient, so AdamW leaves them
# alone), no gradient clipping; 160k iterations (batch 16: 8 GPUs x 2).
# The lr is mmcv 1.x's lr_config of that code: poly (power 1, min 0) over all
# 160k iterations, times a linear warm-up factor from 1e-6 over the first
# 1,500. Both schedulers start at iteration 0, so mmengine multiplies them as
# mmcv did; each reaches its last value at iteration end - 1, hence the ends
# 1501 and 160001 (factors 1 - (1 - i / 1500)(1 - 1e-6) and 1 - i / 160000 at
# iteration i).
_base_ = ['mmseg::_base_/schedules/schedule_160k.py']

optim_wrapper = dict(
    _delete_=True,
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=1e-3, betas=(0.9, 0.999), weight_decay=0.05))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-6, by_epoch=False, begin=0, end=1501),
    dict(type='PolyLR', eta_min=0.0, power=1.0, by_epoch=False, begin=0, end=160001)
]
auto_scale_lr = dict(enable=False, base_batch_size=16)
