# AdaptFormer + ToMe on CIFAR-100: the DyT CIFAR-100 run's frozen ViT-B/16 and
# d = 64, s = 0.1 adapters, no token dispatch (so the classifier trains with
# the plain cross-entropy), and token merging in every block.
# r = 10 merged per block: 197 -> 77 tokens, 12.18 GFLOPs per image by
# tools/analysis_tools/get_flops.py, matched to DyT at r = 0.5 (12.5 GFLOPs in
# the DyT paper). The DyT paper's own ToMe table did not survive in our sources
# (docs of the review, /work/shared/seeds), so r is chosen by matched FLOPs.
# Data, schedule and runtime: those of vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py.
_base_ = [
    '../_base_/models/adaptformer-vit-b-p16.py',
    '../_base_/datasets/cifar100_bs64_224.py',
    './_base_/schedules/adamw_cosine_100e_full-data.py',
    './_base_/default_runtime.py',
]
model = dict(
    data_preprocessor=dict(to_rgb=False),  # as the DyT CIFAR-100 config
    head=dict(num_classes=100),
    backbone=dict(token_reduction=dict(type='ToMe', r=10)))
train_dataloader = dict(batch_size=128)
val_dataloader = dict(batch_size=128)
test_dataloader = val_dataloader
