# DyT on Kinetics-400 as the public train_video.sh (l. 10-32) runs it: the model
# base's frozen ViT-B/16 with d = 64, s = 0.1 adapters and MLP dispatch at r = 0.5 on
# each of 8 frames 16 apart, the frames' tokens attentively pooled; 12 epochs, a total
# batch of 128 = 8 GPUs x 16, tested on 3 clips x 1 crop (docs/video.md).
#   bash tools/dist_train.sh configs/dyt_video/vit-b-p16-dyt_d64_8xb16-12e_k400-8x16x1-224px.py 8
_base_ = [
    '../_base_/models/dyt-video-vit-b-p16.py',
    '../_base_/datasets/k400_bs16_8x16x1-224px.py',
    './_base_/schedules/adamw_cosine_12e_k400.py',
    './_base_/default_runtime.py',
]
model = dict(cls_head=dict(num_classes=400))
