# AdaptFormer + DynamicViT on CIFAR-100: the frozen ViT-B/16 with the DyT
# config's adapters (d = 64, s = 0.1) and DynamicViT's token pruning instead of
# token dispatch. Not a paper setting: adapter, data and schedule stay those
# of the DyT CIFAR-100 run, so the two differ only in how tokens are reduced.
_base_ = ['./vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py']
model = dict(
    # DynamicViTClassifier's defaults are DynamicViT's loss of its official DeiT
    # runs: CE + 2 * mean over stages of the keep-ratio loss + 0.5 * (KL on the
    # logits + MSE on the kept final tokens); teacher: the complete pass
    # (nothing pruned) of the same model, no complete-pass CE.
    type='DynamicViTClassifier',
    complete_loss=False,  # the DyT base's classifier sets it
    # DynamicViT is an AdaptFormer ViT (no dispatch settings): the DyT backbone
    # of _base_/models/dyt-vit-b-p16.py without them (mmengine cannot drop
    # single keys, hence _delete_ and the restated rest). Its pruning defaults
    # are the paper's ViT setting: predictors before blocks 3, 6 and 9, rho =
    # 0.7, so 196 -> 137 -> 96 -> 67 patch tokens (the official int(N *
    # rho^k)); Gumbel-softmax at PyTorch's default temperature 1, as the
    # official code.
    backbone=dict(
        _delete_=True,
        type='DynamicViT',
        arch='base',
        img_size=224,
        patch_size=16,
        drop_path_rate=0.0,
        out_type='cls_token',
        adapter_cfg=dict(bottleneck=64, scale=0.1, dropout=0.1, num_experts=1),
        freeze_pretrained=True,
        init_cfg=dict(
            type='Pretrained', checkpoint='checkpoints/vit-base-p16_in21k.pth', prefix=None)))
