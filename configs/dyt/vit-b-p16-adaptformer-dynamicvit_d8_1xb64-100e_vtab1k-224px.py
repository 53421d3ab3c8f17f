# AdaptFormer + DynamicViT on VTAB-1K: the DyT authors' baseline of their
# review (bottleneck d = 8; VTAB-1K's s = 1.0 and recipe of the DyT VTAB
# configs), DynamicViT's token pruning instead of token dispatch. The 'cifar'
# task; for another start from its DyT config and pass the settings below as
# --cfg-options.
_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
model = dict(
    # DynamicViT's loss and pruning are its classes' defaults, as in
    # vit-b-p16-adaptformer-dynamicvit_d64_8xb128-100e_cifar100-224px.py (the
    # review does not give its rate: rho = 0.7 before blocks 3, 6 and 9).
    type='DynamicViTClassifier',
    complete_loss=False,  # the DyT base's classifier sets it
    backbone=dict(
        # DynamicViT is an AdaptFormer ViT (no dispatch settings): the DyT
        # backbone of _base_/models/dyt-vit-b-p16.py without them.
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
        adapter_cfg=dict(bottleneck=8, scale=1.0, dropout=0.1, num_experts=1)))
