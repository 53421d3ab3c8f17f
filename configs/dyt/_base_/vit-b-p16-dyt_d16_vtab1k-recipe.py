# DyT's VTAB-1K recipe without the data: ViT-B/16 (ImageNet-21k) frozen, MLP
# dispatch at target rate r = 0.5, adapters with d = 16 and scale s = 1.0,
# AdamW lr 1e-3 for 100 epochs (10 of warm-up) for a total batch of 64, and
# the runtime that logs the activation rates and the best epoch. A config is
# this file, a data set base and the head's class count: the VTAB-1K tasks
# add ../../_base_/datasets/vtab1k_bs64_224.py
# (../vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py), a data set of your
# own ../../_base_/datasets/custom_bs64_224.py, whose transforms and batch
# are those of the recipe (docs/finetune_custom_data.md). Each setting and
# its source: docs/recipes.md, "Recipe: VTAB-1K".
_base_ = [
    '../../_base_/models/dyt-vit-b-p16.py',
    './schedules/adamw_cosine_100e_vtab1k.py',
    './default_runtime.py',
]
model = dict(backbone=dict(adapter_cfg=dict(bottleneck=16, scale=1.0)))
