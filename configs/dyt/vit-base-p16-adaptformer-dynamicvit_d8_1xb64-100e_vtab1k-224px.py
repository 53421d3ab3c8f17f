# AdaptFormer + DynamicViT on VTAB-1K: the DyT authors' baseline of their
# review (bottleneck d = 8; VTAB-1K's s = 1.0 and recipe of the DyT VTAB
# configs), DynamicViT's token pruning instead of token dispatch. The 'cifar'
# task; for another start from its DyT config and pass the settings below as
# --cfg-options.
_base_ = ['./vit-base-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
model = dict(
    type='DynamicViTClassifier',
    # DynamicViT's loss (its official DeiT runs): CE + 2 * mean over stages of the
    # keep-ratio loss + 0.5 * (KL on the logits + MSE on the kept final tokens).
    # Teacher: the complete pass (nothing pruned) of the same model.
    complete_loss=False,
    distill_loss=True,
    rate_loss_weight=2.0,
    distill_weight=0.5,
    token_distill='mse',
    backbone=dict(
        # DynamicViT is an AdaptFormer ViT (no dispatch settings): the DyT
        # backbone of _base_/models/dyt-vit-base-p16.py without them.
        _delete_=True,
        type='DynamicViT',
        arch='base',
        img_size=224,
        patch_size=16,
        drop_path_rate=0.0,
        out_type='cls_token',
        freeze_pretrained=True,
        init_cfg=dict(
            type='Pretrained', checkpoint='checkpoints/vit-base-p16_in21k.pth', prefix=None),
        # "The bottleneck dimension is set to 8" (the authors' review answer, W5).
        adapter_cfg=dict(bottleneck=8, scale=1.0, dropout=0.1, num_experts=1),
        # The paper's ViT setting: predictors before blocks 3, 6 and 9, rho = 0.7
        # (the review does not give its rate), 196 -> 137 -> 96 -> 67 patch tokens.
        prune_loc=(3, 6, 9),
        keep_rate=0.7,
        gumbel_tau=1.0))
