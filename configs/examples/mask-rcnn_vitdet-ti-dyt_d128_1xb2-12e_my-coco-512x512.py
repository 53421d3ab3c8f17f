# The detection config of docs/finetune_custom_data.md on a CPU: the ImageNet-21k
# ViT-Ti/16 (192 wide) in place of ViT-B/16 in ViTDet (same windows and global
# blocks), the pyramid and the heads 128 channels wide (the recipe's 256) and 256
# sampled RoIs an image (512), whose convolutions cost most on a CPU, 512 x 512
# images (the recipe's large-scale jitter at half the scale), batch 2, float32
# (the recipe's mixed precision needs a GPU). The data, the 12 epochs and the
# schedule are the guide's config's.
_base_ = ['./mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_my-coco-1024x1024.py']
image_size = (512, 512)
width = 128
pad_val = dict(img=(114, 114, 114))
model = dict(
    backbone=dict(
        arch='tiny',
        input_size=image_size[0],
        init_cfg=dict(checkpoint='checkpoints/vit-tiny-p16_in21k.pth')),
    neck=dict(in_channels=192, out_channels=width),
    rpn_head=dict(in_channels=width, feat_channels=width),
    roi_head=dict(
        bbox_roi_extractor=dict(out_channels=width),
        bbox_head=dict(in_channels=width, conv_out_channels=width),
        mask_roi_extractor=dict(out_channels=width),
        mask_head=dict(in_channels=width, conv_out_channels=width)),
    train_cfg=dict(rcnn=dict(sampler=dict(num=256))))
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations', with_bbox=True, with_mask=True),
    dict(type='RandomResize', scale=image_size, ratio_range=(0.1, 2.0), keep_ratio=True),
    dict(
        type='RandomCrop',
        crop_type='absolute_range',
        crop_size=image_size,
        recompute_bbox=True,
        allow_negative_crop=True),
    dict(type='FilterAnnotations', min_gt_bbox_wh=(1e-2, 1e-2)),
    dict(type='RandomFlip', prob=0.5),
    dict(type='Pad', size=image_size, pad_val=pad_val),
    dict(type='PackDetInputs')
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=image_size, keep_ratio=True),
    dict(type='Pad', size=image_size, pad_val=pad_val),
    dict(type='LoadAnnotations', with_bbox=True, with_mask=True),
    dict(
        type='PackDetInputs',
        meta_keys=('img_id', 'img_path', 'ori_shape', 'img_shape', 'scale_factor'))
]
train_dataloader = dict(batch_size=2, num_workers=2, dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(num_workers=2, dataset=dict(pipeline=test_pipeline))
test_dataloader = val_dataloader
optim_wrapper = dict(type='OptimWrapper')
