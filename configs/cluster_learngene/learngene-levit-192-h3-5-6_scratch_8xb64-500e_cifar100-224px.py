# From-Scratch row of the rebuttal's LeViT table (R4) on CIFAR-100: a plain
# LeViT of the descendants' shape (LeViT-192's: 3 / 5 / 6 heads, 4 / 4 / 4
# blocks; _base_/models/levit-192.py) with random weights and nothing from a
# learngene, trained for the descendants' 500 epochs (seed
# 000_7130df39bf8bc907.txt:25; the downstream From-Scratch rows of Table 2 train
# as long as the others) with their recipe
# (learngene-levit-192-h3-5-6_levit-192-eps10_8xb64-500e_cifar100-224px.py).
_base_ = [
    './_base_/models/levit-192.py',
    '../_base_/datasets/cifar100_bs64_deit_224.py',
    './_base_/schedules/adamw_cosine_500e_bs512.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(head=dict(num_classes=100))
# No weight decay on the attention biases either (as LeViT trains).
optim_wrapper = dict(paramwise_cfg=dict(custom_keys={'.attention_biases': dict(decay_mult=0.0)}))
default_hooks = dict(logger=dict(interval=100), checkpoint=dict(interval=10, max_keep_ckpts=3))
