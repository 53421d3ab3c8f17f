# Hand-written digits, generated from scikit-learn's 8x8 digits upsampled to
# 32x32 RGB (mmvitdyn.datasets.generators.digits): 10 classes, 1,438 train /
# 359 val images with the default split. Create it with
#   python tools/dataset_converters/gen_digits.py --out-dir data/digits
# mmpretrain's CustomDataset, whose errors name an unreadable image file.
dataset_type = 'FileCheckedCustomDataset'
data_root = 'data/digits'
data_preprocessor = dict(
    num_classes=10,
    # Pixel mean/std of the generated train split (grey, so equal per channel).
    mean=[77.97, 77.97, 77.97],
    std=[82.51, 82.51, 82.51],
    to_rgb=True,
)

# No flips: a mirrored digit is another symbol (or none).
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(
        type='RandomResizedCrop',
        scale=32,
        crop_ratio_range=(0.8, 1.0),
        aspect_ratio_range=(0.9, 1.1)),
    dict(type='PackInputs'),
]
# Every test image is brought to the model's 32x32 (a larger image would
# otherwise zero-pad its whole batch).
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(32, 32)),
    dict(type='PackInputs'),
]

train_dataloader = dict(
    batch_size=32,
    num_workers=2,
    dataset=dict(
        type=dataset_type, data_root=data_root, data_prefix='train', pipeline=train_pipeline),
    sampler=dict(type='DefaultSampler', shuffle=True),
)
val_dataloader = dict(
    batch_size=32,
    num_workers=2,
    dataset=dict(type=dataset_type, data_root=data_root, data_prefix='val', pipeline=test_pipeline),
    sampler=dict(type='DefaultSampler', shuffle=False),
)
val_evaluator = dict(type='Accuracy', topk=(1, ))

test_dataloader = val_dataloader
test_evaluator = val_evaluator
