# Pretraining-Finetuning row of the review answer R4 (2) on EuroSAT: the whole
# ImageNet DeiT-S/16 (12 layers, the table's depth) fine-tuned with the
# descendants' 500-epoch schedule (see
# learngene-vit-s-p16-l12-h6_deit-s-eps10_8xb64-500e_eurosat-224px).
_base_ = [
    './_base_/models/deit-s-p16.py',
    '../_base_/datasets/eurosat_bs64_deit_224.py',
    './_base_/schedules/adamw_cosine_500e_bs512.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(head=dict(num_classes=10))
default_hooks = dict(logger=dict(interval=100), checkpoint=dict(interval=10, max_keep_ckpts=3))
