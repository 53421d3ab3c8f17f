# Pretraining-Finetuning row of the rebuttal's LeViT table (R4) on ImageNet-1k:
# the whole ancestry, LeViT-192 pretrained on ImageNet-1k (mmpretrain's
# levit-192_3rdparty_in1k, the official LeViT-192 weights; its backbone, the
# classifier starts random as the DeiT rows' does), fine-tuned 50 epochs with
# the recipe of the LeViT descendants it is compared with
# (learngene-levit-192-h3-5-6_levit-192-eps10_8xb128-50e_in1k-224px.py): the
# 50 ImageNet epochs of the rebuttal (seed 000_7130df39bf8bc907.txt:25), the
# rest the paper's descendant recipe (the schedule base cites the public code).
_base_ = [
    './_base_/models/levit-192.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    './_base_/schedules/adamw_cosine_50e_bs1024.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(
    backbone=dict(
        init_cfg=dict(
            type='Pretrained',
            checkpoint='checkpoints/levit-192_3rdparty_in1k_20230117-8217a0f9.pth',
            prefix='backbone.')))
# No weight decay on the attention biases either (as LeViT trains).
optim_wrapper = dict(paramwise_cfg=dict(custom_keys={'.attention_biases': dict(decay_mult=0.0)}))
# 8 GPUs x 128 images = the schedule's batch of 1024 (1,251 iterations an epoch).
train_dataloader = dict(batch_size=128)
default_hooks = dict(logger=dict(interval=100))
