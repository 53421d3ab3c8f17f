# AdaptFormer baseline on Something-Something v2 (AdapterViT frames): no token dispatch (every
# token runs every MLP), the same d = 64, s = 0.1 adapters, pooling, data and recipe
# as vit-b-p16-dyt_d64_8xb16-50e_ssv2-u8-224px.py; DyTRecognizer3D then trains
# with the plain cross-entropy (no complete pass, no rate loss).
_base_ = [
    '../_base_/models/adaptformer-video-vit-b-p16.py',
    '../_base_/datasets/ssv2_bs16_u8-224px.py',
    './_base_/schedules/adamw_cosine_50e_ssv2.py',
    './_base_/default_runtime.py',
]
model = dict(cls_head=dict(num_classes=174))
