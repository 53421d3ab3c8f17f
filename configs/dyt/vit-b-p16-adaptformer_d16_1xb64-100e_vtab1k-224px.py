# AdaptFormer baseline (AdapterViT): no token dispatch (every token runs every
# block part), the same d = 16, s = 1.0 adapters and recipe as DyT's
# vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py; DyTImageClassifier then trains
# with the plain cross-entropy. VTAB-1K 'cifar'; another task: set its data
# root and class count as a task config does (vit-b-p16-dyt_d16_1xb64-100e_vtab1k-dtd-224px.py).
_base_ = [
    '../_base_/models/adaptformer-vit-b-p16.py',
    './_base_/schedules/adamw_cosine_100e_vtab1k.py',
    './_base_/default_runtime.py',
    '../_base_/datasets/vtab1k_bs64_224.py',
]
model = dict(backbone=dict(adapter_cfg=dict(bottleneck=16, scale=1.0)), head=dict(num_classes=100))
