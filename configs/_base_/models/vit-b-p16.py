# ViT-B/16 at 224 (14x14 patches + class token) with a new linear head, every
# weight trained: the full fine-tuning baseline, and the model that
# adaptformer-vit-b-p16.py (AdaptFormer) and dyt-vit-b-p16.py (DyT) tune.
#
# The pretrained weights are those of the official DyT code, timm's
# jx_vit_base_patch16_224_in21k-e5005f0a.pth (Google's original in21k
# ViT-B_16.npz). init_cfg reads timm .pth, Google .npz, mmpretrain and
# official DyT checkpoints directly; converting once gives a plain
# mmvitdyn file and prints the architecture it holds:
#   python tools/model_converters/timm2mmvitdyn.py \
#       jx_vit_base_patch16_224_in21k-e5005f0a.pth checkpoints/vit-base-p16_in21k.pth
# (or ViT-B_16.npz, or an AugReg in21k .npz, as SRC).
#
# Input normalisation belongs to that checkpoint: Google's in21k ViT expects
# RGB pixels mapped to [-1, 1], mean = std = 127.5 (the public DyT scripts'
# IMAGENET_INCEPTION_MEAN/STD). It sits inside ``model``: the Runner and
# mmvitdyn.apis.init_model use a config's top-level ``data_preprocessor`` (a
# data set base's statistics) only for a model without its own, so no data
# set base can replace it. A data set whose loader gives RGB already (e.g.
# mmpretrain's CIFAR) sets ``model.data_preprocessor.to_rgb=False``.
custom_imports = dict(imports=['mmvitdyn'], allow_failed_imports=False)
model = dict(
    type='ImageClassifier',
    data_preprocessor=dict(
        type='ClsDataPreprocessor', mean=[127.5] * 3, std=[127.5] * 3, to_rgb=True),
    backbone=dict(
        type='ViT',
        arch='base',
        img_size=224,
        patch_size=16,
        drop_path_rate=0.0,  # the public scripts' --drop_path 0.0 (VTAB-1K and full data)
        out_type='cls_token',
        init_cfg=dict(
            type='Pretrained', checkpoint='checkpoints/vit-base-p16_in21k.pth', prefix=None)),
    neck=None,
    head=dict(
        type='LinearClsHead',
        num_classes=1000,
        in_channels=768,
        loss=dict(type='CrossEntropyLoss', loss_weight=1.0),
        # re-initialised as the public scripts do (trunc-normal std 0.01, after MoCo v3)
        init_cfg=dict(type='TruncNormal', layer='Linear', std=0.01)))
