# Full fine-tuning baseline on Kinetics-400: plain ViT frames (no dispatch, no
# adapter), every weight of the ViT trained (the public code's --fulltune,
# main_video.py l. 287), with the pooling, data and recipe of
# vit-b-p16-dyt_d64_8xb16-12e_k400-8x16x1-224px.py so only what trains differs;
# DyTRecognizer3D then trains with the plain cross-entropy.
_base_ = [
    '../_base_/models/video-vit-b-p16.py',
    '../_base_/datasets/k400_bs16_8x16x1-224px.py',
    './_base_/schedules/adamw_cosine_12e_k400.py',
    './_base_/default_runtime.py',
]
model = dict(cls_head=dict(num_classes=400))
