# UperNet on a ViT-B/16 adapted by DyT, as the paper's segmentation setting:
# mmseg's ViT-B UperNet (multi-level neck to strides 4..32, UPerHead, FCN
# auxiliary head of weight 0.4) with the backbone replaced by a DyTViT:
# frozen, MLP token dispatch at target rate 0.5, adapter d = 64, global
# attention with the class token, position embedding interpolated from the
# 224 grid; the outputs of blocks 3, 5, 7, 11 as (B, 768, h, w) maps.
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
    type='DyTEncoderDecoder',
    data_preprocessor=dict(mean=[127.5] * 3, std=[127.5] * 3, bgr_to_rgb=True),
    rate_loss_weight=2.0,  # segmentation losses + 2 * L_rate
    pretrained=None,
    backbone=dict(
        _delete_=True,
        type='DyTViT',
        arch='base',
        img_size=224,
        patch_size=16,
        drop_path_rate=0.1,
        out_indices=(3, 5, 7, 11),
        out_type='featmap',
        dispatch='mlp',
        target_rate=0.5,
        adapter_cfg=dict(bottleneck=64, scale=0.1, dropout=0.1, num_experts=1),
        freeze_pretrained=True,
        init_cfg=dict(
            type='Pretrained', checkpoint='checkpoints/vit-base-p16_in21k.pth', prefix=None)))

custom_hooks = [dict(type='DispatchRateHook')]
