# AdaptFormer + DynamicViT on CIFAR-100: the frozen ViT-B/16 with the DyT
# config's adapters (d = 64, s = 0.1) and DynamicViT's token pruning instead of
# token dispatch. Not a paper setting: adapter, data and schedule stay those
# of the DyT CIFAR-100 run, so the two differ only in how tokens are reduced.
_base_ = [
    '../_base_/models/adaptformer-vit-b-p16.py',
    '../_base_/datasets/cifar100_bs64_224.py',
    './_base_/schedules/adamw_cosine_100e_full-data.py',
    './_base_/default_runtime.py',
]
model = dict(
    # DynamicViTClassifier's defaults are DynamicViT's loss of its official DeiT
    # runs: CE + 2 * mean over stages of the keep-ratio loss + 0.5 * (KL on the
    # logits + MSE on the kept final tokens); teacher: the complete pass
    # (nothing pruned) of the same model, no complete-pass CE.
    type='DynamicViTClassifier',
    data_preprocessor=dict(to_rgb=False),  # as the DyT CIFAR-100 config
    head=dict(num_classes=100),
    # DynamicViT is an AdapterViT: the AdaptFormer backbone, pruning added. Its
    # pruning defaults are the paper's ViT setting: predictors before blocks 3,
    # 6 and 9, rho = 0.7, so 196 -> 137 -> 96 -> 67 patch tokens (the official
    # int(N * rho^k)); Gumbel-softmax at PyTorch's default temperature 1, as
    # the official code.
    backbone=dict(type='DynamicViT'))
train_dataloader = dict(batch_size=128)
val_dataloader = dict(batch_size=128)
test_dataloader = val_dataloader
