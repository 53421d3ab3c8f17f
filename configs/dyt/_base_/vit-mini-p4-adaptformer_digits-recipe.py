# The demo's AdaptFormer recipe: the ViT trained by
# configs/vit/vit-mini-p4_1xb32-20e_digits-32px.py, frozen (start from its
# checkpoint, given as load_from), with adapters (d=16, s=1.0 as the VTAB-1K
# recipe for small data) and no token dispatch, 8 epochs at lr 1e-3. The DyT
# (../vit-mini-p4-dyt_1xb32-8e_digits-32px.py) and DynamicViT
# (../vit-mini-p4-adaptformer-dynamicvit_1xb32-8e_digits-32px.py) configs add
# their token selection to it.
_base_ = ['../../vit/vit-mini-p4_1xb32-20e_digits-32px.py']
model = dict(
    type='DyTImageClassifier',
    backbone=dict(
        type='AdapterViT',
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
