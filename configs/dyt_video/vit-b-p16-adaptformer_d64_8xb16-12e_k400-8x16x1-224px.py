# AdaptFormer baseline on Kinetics-400 (AdapterViT frames): no token dispatch (every
# token runs every MLP), the same d = 64, s = 0.1 adapters, pooling, data and recipe
# as vit-b-p16-dyt_d64_8xb16-12e_k400-8x16x1-224px.py; DyTRecognizer3D then trains
# with the plain cross-entropy (no complete pass, no rate loss).
_base_ = [
    '../_base_/models/adaptformer-video-vit-b-p16.py',
    '../_base_/datasets/k400_bs16_8x16x1-224px.py',
    './_base_/schedules/adamw_cosine_12e_k400.py',
    './_base_/default_runtime.py',
]
model = dict(cls_head=dict(num_classes=400))
