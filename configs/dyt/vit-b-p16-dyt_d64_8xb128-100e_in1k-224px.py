# DyT on ImageNet-1k: the model base's d = 64, s = 0.1 adapters and MLP
# dispatch at r = 0.5 on the in21k ViT-B/16 with the full-data recipe of the
# public train_IN21K.sh (lr 4e-3 for a total batch of 1024 = 8 GPUs x 128,
# weight decay 0.01, 100 epochs, 20 warm-up, cosine to 0) and the plain
# augmentation of its main_image.py, whose 'imagenet' data set reads the same
# transforms; the public scripts ship no ImageNet run of their own.
_base_ = [
    '../_base_/models/dyt-vit-b-p16.py',
    '../_base_/datasets/imagenet_bs64_rrc_224.py',
    './_base_/schedules/adamw_cosine_100e_full-data.py',
    './_base_/default_runtime.py',
]
train_dataloader = dict(batch_size=128)
val_dataloader = dict(batch_size=128)
test_dataloader = val_dataloader
# 1,251 iterations an epoch.
default_hooks = dict(logger=dict(interval=100))
