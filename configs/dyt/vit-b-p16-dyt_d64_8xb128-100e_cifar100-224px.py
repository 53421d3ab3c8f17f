# DyT on CIFAR-100 (full data, upsampled to 224), as the public train_IN21K.sh
# runs it: the model base's d = 64, s = 0.1 adapters, MLP dispatch at r = 0.5,
# and the full-data recipe, a total batch of 1024 = 8 GPUs x 128.
_base_ = [
    '../_base_/models/dyt-vit-b-p16.py',
    '../_base_/datasets/cifar100_bs64_224.py',
    './_base_/schedules/adamw_cosine_100e_full-data.py',
    './_base_/default_runtime.py',
]
# mmpretrain's CIFAR100 yields RGB arrays: no BGR -> RGB swap.
model = dict(data_preprocessor=dict(to_rgb=False), head=dict(num_classes=100))
train_dataloader = dict(batch_size=128)
val_dataloader = dict(batch_size=128)
test_dataloader = val_dataloader
