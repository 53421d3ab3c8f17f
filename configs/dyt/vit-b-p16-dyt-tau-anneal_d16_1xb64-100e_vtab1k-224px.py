# DyT on VTAB-1K with the dispatchers' Gumbel-Sigmoid temperature annealed
# from 5 to 0.1 along a cosine over the training iterations
# (GumbelTemperatureHook; docs/recipes.md, "The dispatchers' temperature").
# Not a paper setting: the DyT configs, as the paper, train at the constant
# tau = 5 of TokenDispatcher; this is the schedule option of the spec ("a
# schedule such as 5 -> 0.1 must be possible"). Otherwise
# vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py ('cifar'; another task: set its
# data root and class count as a task config does).
_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
custom_hooks = [
    dict(type='DispatchRateHook'),
    dict(type='BestOverEpochsHook', key='accuracy/top1', rule='greater'),
    dict(type='GumbelTemperatureHook', start=5.0, end=0.1, schedule='cosine'),
]
