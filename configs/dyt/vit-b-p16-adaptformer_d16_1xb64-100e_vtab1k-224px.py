# AdaptFormer baseline (AdapterViT): no token dispatch (every token runs every
# block part), the same d = 16, s = 1.0 adapters and recipe as DyT;
# DyTImageClassifier then trains with the plain cross-entropy. VTAB-1K
# 'cifar'; other tasks: start from the task's config and pass --cfg-options
# model.backbone.dispatch=None (DyTViT without dispatch: the same model).
_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
model = dict(
    backbone=dict(
        _delete_=True,
        type='AdapterViT',
        arch='base',
        img_size=224,
        patch_size=16,
        drop_path_rate=0.0,
        out_type='cls_token',
        adapter_cfg=dict(bottleneck=16, scale=1.0, dropout=0.1, num_experts=1),
        freeze_pretrained=True,
        init_cfg=dict(
            type='Pretrained', checkpoint='checkpoints/vit-base-p16_in21k.pth', prefix=None)))
