# From-Scratch row of the rebuttal's LeViT table (R4) on ImageNet-1k: a plain
# LeViT of the descendants' shape (LeViT-192's: 3 / 5 / 6 heads, 4 / 4 / 4
# blocks; _base_/models/levit-192.py) with random weights and nothing from a
# learngene, trained 100 epochs where the descendants fine-tune 50: the paper's
# From-Scratch convention on ImageNet (seed 000_7130df39bf8bc907.txt:109,
# "From-Scratch trains models for 100 epochs, while the Pretraining-Finetuning
# and our method only fine-tune the downstream models for 50 epochs"; R4 itself,
# line 25, names only the fine-tuning epochs). The rest is the descendants'
# recipe (learngene-levit-192-h3-5-6_levit-192-eps10_8xb128-50e_in1k-224px.py).
_base_ = [
    './_base_/models/levit-192.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    './_base_/schedules/adamw_cosine_50e_bs1024.py',
    '../_base_/runtimes/mmpretrain.py',
]
# No weight decay on the attention biases either (as LeViT trains).
optim_wrapper = dict(paramwise_cfg=dict(custom_keys={'.attention_biases': dict(decay_mult=0.0)}))
train_cfg = dict(max_epochs=100)
# 8 GPUs x 128 images = the schedule's batch of 1024 (1,251 iterations an epoch).
train_dataloader = dict(batch_size=128)
default_hooks = dict(logger=dict(interval=100))
