# mmaction2's runtime (seed 0, main_video.py l. 88) with the activation rates of
# DyT's dispatchers logged next to the validation metrics and the public scripts'
# "Max metric" (main_video.py l. 369-381: the best top-1 over the evaluations)
# logged as acc/top1_best_epoch next to each evaluation's acc/top1.
_base_ = ['../../_base_/runtimes/mmaction.py']
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=20),
    checkpoint=dict(type='CheckpointHook', interval=1, max_keep_ckpts=1, save_best='auto'))
custom_hooks = [
    dict(type='DispatchRateHook'),
    dict(type='BestOverEpochsHook', key='acc/top1', rule='greater')
]
