# Beyond the paper: DyT on a Cluster-Learngene descendant. The descendant of
# learngene-vit-mini-p4-h3_vit-mini-eps0.1_1xb32-10e_digits-32px.py (6 layers,
# 3 heads, from the demo ViT's learngene) is built as a DyTLearngeneViT: its
# inherited weights stay frozen, adapters (d=16) and MLP token dispatchers
# (target rate 0.5) train with DyT's losses. Start from the trained
# descendant with --cfg-options load_from=work_dirs/.../epoch_10.pth.
_base_ = ['./learngene-vit-mini-p4-h3_vit-mini-eps0.1_1xb32-10e_digits-32px.py']
model = dict(
    type='DyTImageClassifier',
    backbone=dict(
        type='DyTLearngeneViT',
        dispatch='mlp',
        target_rate=0.5,
        adapter_cfg=dict(bottleneck=16, scale=1.0, dropout=0.1),
        drop_path_rate=0.0),
    head=dict(loss=dict(_delete_=True, type='CrossEntropyLoss', loss_weight=1.0)))
optim_wrapper = dict(optimizer=dict(lr=1e-3, weight_decay=1e-4))
train_cfg = dict(max_epochs=8, val_interval=4)
custom_hooks = [dict(type='DispatchRateHook')]
