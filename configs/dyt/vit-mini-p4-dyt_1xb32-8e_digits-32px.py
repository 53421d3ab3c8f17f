# The demo's DyT model: the ViT trained by configs/vit/vit-mini-p4_1xb32-20e_digits-32px.py
# (frozen; its checkpoint, head included, is the starting point given as
# load_from) plus adapters (d=16, s=1.0 as the VTAB-1K recipe for small data)
# and MLP token dispatchers at a target activation rate of 0.5.
#   python tools/train.py configs/dyt/vit-mini-p4-dyt_1xb32-8e_digits-32px.py \
#       --cfg-options load_from=work_dirs/demo/vit-digits/epoch_20.pth
_base_ = ['../vit/vit-mini-p4_1xb32-20e_digits-32px.py']
model = dict(
    type='DyTImageClassifier',
    complete_loss=True,
    distill_loss=True,
    rate_loss_weight=2.0,
    backbone=dict(
        type='DyTViT',
        dispatch='mlp',
        target_rate=0.5,
        adapter_cfg=dict(bottleneck=16, scale=1.0, dropout=0.1, num_experts=1),
        drop_path_rate=0.0),
    head=dict(loss=dict(_delete_=True, type='CrossEntropyLoss', loss_weight=1.0)))
optim_wrapper = dict(optimizer=dict(lr=1e-3, weight_decay=1e-4))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=True, end=1, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=1)
]
train_cfg = dict(max_epochs=8, val_interval=4)
# Logs the activation rates of validation and test next to the metrics.
custom_hooks = [dict(type='DispatchRateHook')]
