# COCO 2017 instance segmentation with Large Scale Jitter at 1024x1024, the
# ViTDet recipe (mmdet projects/ViTDet): resize the long side to 1024 x a
# random 0.1..2.0, crop or pad to a fixed 1024x1024 canvas. The test images
# keep their aspect ratio and are padded to the same canvas, as the windowed
# ViT backbone expects a fixed input size.
_base_ = ['mmdet::_base_/datasets/coco_instance.py']

image_size = (1024, 1024)
pad_val = dict(img=(114, 114, 114))

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

# ViTDet trains with 64 images a batch: 16 GPUs x 4.
# FileCheckedCocoDataset: mmdet's CocoDataset, whose errors name an unreadable
# annotation or image file.
train_dataloader = dict(
    batch_size=4,
    num_workers=8,
    dataset=dict(type='FileCheckedCocoDataset', pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(type='FileCheckedCocoDataset', pipeline=test_pipeline))
test_dataloader = val_dataloader

# mmdet's CocoMetric, reporting 0 (and why) when a short run detects nothing.
val_evaluator = dict(type='EmptyAwareCocoMetric')
test_evaluator = val_evaluator
