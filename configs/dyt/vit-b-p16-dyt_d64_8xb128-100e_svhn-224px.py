# DyT on SVHN (full data, upsampled to 224), as the public train_IN21K.sh runs
# it: the model base's d = 64, s = 0.1 adapters, MLP dispatch at r = 0.5, and
# the full-data recipe, a total batch of 1024 = 8 GPUs x 128. Data layout:
# ../_base_/datasets/svhn_bs64_rrc_224.py.
_base_ = [
    '../_base_/models/dyt-vit-b-p16.py',
    '../_base_/datasets/svhn_bs64_rrc_224.py',
    './_base_/schedules/adamw_cosine_100e_full-data.py',
    './_base_/default_runtime.py',
]
model = dict(head=dict(num_classes=10))
train_dataloader = dict(batch_size=128)
val_dataloader = dict(batch_size=128)
test_dataloader = val_dataloader
