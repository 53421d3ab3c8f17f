# mmpretrain's runtime, with the activation rates of DyT's token dispatchers
# logged next to the validation metrics, and the best checkpoint kept.
_base_ = ['mmpretrain::_base_/default_runtime.py']
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=10),
    checkpoint=dict(type='CheckpointHook', interval=10, max_keep_ckpts=1, save_best='auto'))
custom_hooks = [dict(type='DispatchRateHook')]
