# ViTDet (Li et al., 2022): Mask R-CNN on a plain ViT-B/16 (ViTDet), every
# weight trained. Backbone: windowed attention (14x14 windows) with global
# attention in blocks 2, 5, 8, 11, decomposed relative position bias, one
# stride-16 map out. Neck: ViTDet's simple feature pyramid (strides 4..64) with
# LayerNorm; heads: 2-conv RPN, 4conv1fc box head and mask head with
# LayerNorm, as ViTDet. The DyT, AdaptFormer and full fine-tuning configs
# start from it (mask-rcnn_adaptformer-vitdet-b-d128_simple-fpn.py tunes it
# with AdaptFormer, mask-rcnn_dyt-vitdet-b-d128_simple-fpn.py that with DyT).
#
# Weights: the ImageNet-21k ViT-B/16 the DyT paper uses, converted once
#   python tools/model_converters/timm2mmvitdyn.py \
#       jx_vit_base_patch16_224_in21k-e5005f0a.pth checkpoints/vit-base-p16_in21k.pth
# (an MAE checkpoint, ViTDet's own choice, loads the same way). The class-token
# slot of its 14x14 pos_embed is dropped and the grid interpolated per input;
# the relative-position tables, which it lacks, start at zero and train.
# Input normalisation follows that checkpoint: mean = std = 127.5 on RGB,
# in the model's data_preprocessor (no data set base can change it). With
# an MAE checkpoint, set ViTDet's ImageNet mean/std instead:
#   model.data_preprocessor.mean=[123.675,116.28,103.53]
#   model.data_preprocessor.std=[58.395,57.12,57.375]
_base_ = ['mmdet::_base_/models/mask-rcnn_r50_fpn.py']
custom_imports = dict(imports=['mmvitdyn'], allow_failed_imports=False)

norm_cfg = dict(type='LN2d', requires_grad=True)
model = dict(
    data_preprocessor=dict(mean=[127.5] * 3, std=[127.5] * 3, bgr_to_rgb=True),
    backbone=dict(
        _delete_=True,
        type='ViTDet',
        arch='base',
        img_size=224,
        patch_size=16,
        window_size=14,
        global_indices=(2, 5, 8, 11),
        use_rel_pos=True,
        input_size=1024,
        drop_path_rate=0.1,
        out_indices=-1,
        init_cfg=dict(
            type='Pretrained', checkpoint='checkpoints/vit-base-p16_in21k.pth', prefix=None)),
    neck=dict(
        _delete_=True,
        type='SimpleFPN',
        in_channels=768,
        out_channels=256,
        scale_factors=(4, 2, 1, 0.5),
        num_outs=5,
        norm_cfg=norm_cfg),
    rpn_head=dict(num_convs=2),
    roi_head=dict(
        bbox_head=dict(type='Shared4Conv1FCBBoxHead', conv_out_channels=256, norm_cfg=norm_cfg),
        mask_head=dict(norm_cfg=norm_cfg)))
