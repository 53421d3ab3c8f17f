# What the ViT-B/16 UperNet configs on ADE20K share besides their model: mmseg's
# ADE20K recipe at 512x512 crops (../../_base_/datasets/ade20k_512x512.py), the
# mmseg runtime, DyT's segmentation schedule (AdamW lr 1e-3, poly over 160k
# iterations: ../../_base_/schedules/adamw-poly_160k_seg.py) and a batch of
# 16 = 8 GPUs x 2. The model's ADE20K settings (150 classes, 512 crops, the
# sliding-window test) stay in each config: mmengine refuses a key (here ``model``)
# that two bases of one config both define.
_base_ = [
    '../../_base_/datasets/ade20k_512x512.py',
    '../../_base_/runtimes/mmseg.py',
    '../../_base_/schedules/adamw-poly_160k_seg.py',
]
train_dataloader = dict(batch_size=2)
