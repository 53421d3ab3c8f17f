# mmpretrain's runtime, with the activation rates of DyT's token dispatchers
# logged next to the validation metrics, and the best checkpoint kept.
# The paper's VTAB-1K (and full-data) numbers are the best test accuracy
# over the training epochs (the public scripts keep "Max metric"), i.e. a
# model selected on the test split. BestOverEpochsHook logs that number as
# accuracy/top1_best_epoch next to each epoch's accuracy/top1; after the last
# epoch, accuracy/top1 is the last-epoch accuracy, which needs no selection
# on the test split. For a selection that does not see the test split, train
# on train800.txt and validate on val200.txt (VTAB-1K's 800/200 split).
_base_ = ['../../_base_/runtimes/mmpretrain.py']
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=10),
    checkpoint=dict(type='CheckpointHook', interval=10, max_keep_ckpts=1, save_best='auto'))
custom_hooks = [
    dict(type='DispatchRateHook'),
    dict(type='BestOverEpochsHook', key='accuracy/top1', rule='greater')
]
