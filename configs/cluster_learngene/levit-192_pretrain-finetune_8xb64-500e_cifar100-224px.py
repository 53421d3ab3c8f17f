# Pretraining-Finetuning row of the rebuttal's LeViT table (R4) on CIFAR-100 (at
# 224, with the DeiT augmentation of the paper's recipe): the ImageNet LeViT-192
# (the ancestry, as in levit-192_pretrain-finetune_8xb128-50e_in1k-224px.py)
# fine-tuned 500 epochs (seed 000_7130df39bf8bc907.txt:25) on 8 GPUs x 64
# images with the schedule of the descendants it is compared with
# (learngene-levit-192-h3-5-6_levit-192-eps10_8xb64-500e_cifar100-224px.py).
_base_ = [
    './_base_/models/levit-192.py',
    '../_base_/datasets/cifar100_bs64_deit_224.py',
    './_base_/schedules/adamw_cosine_500e_bs512.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(
    backbone=dict(
        init_cfg=dict(
            type='Pretrained',
            checkpoint='checkpoints/levit-192_3rdparty_in1k_20230117-8217a0f9.pth',
            prefix='backbone.')),
    head=dict(num_classes=100))
# No weight decay on the attention biases either (as LeViT trains).
optim_wrapper = dict(paramwise_cfg=dict(custom_keys={'.attention_biases': dict(decay_mult=0.0)}))
default_hooks = dict(logger=dict(interval=100), checkpoint=dict(interval=10, max_keep_ckpts=3))
