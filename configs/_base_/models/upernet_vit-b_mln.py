# UperNet on a plain ViT-B/16, every weight trained: mmseg's ViT-B UperNet
# (multi-level neck to strides 4..32, UPerHead, FCN auxiliary head of weight
# 0.4) with the backbone replaced by our ViT: global attention with the class
# token, position embedding interpolated from the 224 grid; the outputs of
# blocks 3, 5, 7, 11 as (B, 768, h, w) maps. The DyT, AdaptFormer and full
# fine-tuning configs start from it (upernet_adaptformer-vit-b-d64_mln.py
# tunes it with AdaptFormer, upernet_dyt-vit-b-d64_mln.py that with DyT).
#
# Weights: the ImageNet-21k ViT-B/16, converted once
#   python tools/model_converters/timm2mmvitdyn.py \
#       jx_vit_base_patch16_224_in21k-e5005f0a.pth checkpoints/vit-base-p16_in21k.pth
# Its input normalisation, mean = std = 127.5 on RGB (the public DyT
# segmentation config's img_norm_cfg), sits in the model's
# data_preprocessor, where mmseg keeps it: no data set base can change it.
_base_ = ['mmseg::_base_/models/upernet_vit-b16_ln_mln.py']
custom_imports = dict(imports=['mmvitdyn'], allow_failed_imports=False)

model = dict(
    data_preprocessor=dict(mean=[127.5] * 3, std=[127.5] * 3, bgr_to_rgb=True),
    pretrained=None,
    backbone=dict(
        _delete_=True,
        type='ViT',
        arch='base',
        img_size=224,
        patch_size=16,
        drop_path_rate=0.1,
        out_indices=(3, 5, 7, 11),
        out_type='featmap',
        init_cfg=dict(
            type='Pretrained', checkpoint='checkpoints/vit-base-p16_in21k.pth', prefix=None)))
