# DyT's segmentation schedule: AdamW, lr 1e-3, 160k iterations (batch 16:
# 8 GPUs x 2), 1.5k linear warm-up then poly decay (power 1) to 0, as
# mmseg's ViT UperNet recipe apart from the rate. Only trainable parameters
# reach the optimiser; norms, biases and position embeddings are not decayed.
_base_ = ['mmseg::_base_/schedules/schedule_160k.py']

optim_wrapper = dict(
    _delete_=True,
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=1e-3, betas=(0.9, 0.999), weight_decay=0.01),
    constructor='LayerDecayOptimWrapperConstructor',
    paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-6, by_epoch=False, begin=0, end=1500),
    dict(type='PolyLR', eta_min=0.0, power=1.0, by_epoch=False, begin=1500, end=160000)
]
