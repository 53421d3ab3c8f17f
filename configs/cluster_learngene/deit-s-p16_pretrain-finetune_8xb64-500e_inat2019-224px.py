# Pretraining-Finetuning row of Table 2 on iNaturalist 2019: the whole ImageNet
# DeiT-S/16 (12 layers, the table's depth) fine-tuned with the descendants'
# 500-epoch schedule.
_base_ = [
    './_base_/models/deit-s-p16.py',
    '../_base_/datasets/inat2019_bs64_deit_224.py',
    './_base_/schedules/adamw_cosine_500e_bs512.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(head=dict(num_classes=1010))
default_hooks = dict(logger=dict(interval=100), checkpoint=dict(interval=10, max_keep_ckpts=3))
