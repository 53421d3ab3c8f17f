# DyT on Something-Something v2 as the public train_video.sh (l. 35-58) runs it: the
# model base's frozen ViT-B/16 with d = 64, s = 0.1 adapters and MLP dispatch at
# r = 0.5 on 8 frames, one from each of 8 segments, the frames' tokens attentively
# pooled; 50 epochs, a total batch of 128 = 8 GPUs x 16, tested on 1 clip x 3 crops
# (docs/video.md).
#   bash tools/dist_train.sh configs/dyt_video/vit-b-p16-dyt_d64_8xb16-50e_ssv2-u8-224px.py 8
_base_ = [
    '../_base_/models/dyt-video-vit-b-p16.py',
    '../_base_/datasets/ssv2_bs16_u8-224px.py',
    './_base_/schedules/adamw_cosine_50e_ssv2.py',
    './_base_/default_runtime.py',
]
model = dict(cls_head=dict(num_classes=174))
