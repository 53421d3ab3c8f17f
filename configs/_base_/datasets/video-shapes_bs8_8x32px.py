# Drawn shapes as real .mp4 clips (mmvitdyn.datasets.generators.video_shapes):
# 3 classes, each the pair of shapes its 8 frames of 32 x 32 px show, 48 train /
# 24 val clips. Create it with
#   python tools/dataset_converters/gen_video_shapes.py --out-dir data/video_shapes
# Read as mmaction2 reads Kinetics: VideoDataset, decord, NCTHW clips.
dataset_type = 'VideoDataset'
data_root = 'data/video_shapes'
num_classes = 3
# The public DyT video scripts' normalisation: mean = std = 0.5 of [0, 1] pixels.
data_preprocessor = dict(
    type='ActionDataPreprocessor', mean=[127.5] * 3, std=[127.5] * 3, format_shape='NCTHW')

# One clip of all 8 frames: a shorter clip may show one of its two shapes only.
train_pipeline = [
    dict(type='DecordInit'),
    dict(type='SampleFrames', clip_len=8, frame_interval=1, num_clips=1),
    dict(type='DecordDecode'),
    dict(type='Resize', scale=(32, 32), keep_ratio=False),
    dict(type='Flip', flip_ratio=0.5),
    dict(type='FormatShape', input_format='NCTHW'),
    dict(type='PackActionInputs'),
]
test_pipeline = [
    dict(type='DecordInit'),
    dict(type='SampleFrames', clip_len=8, frame_interval=1, num_clips=1, test_mode=True),
    dict(type='DecordDecode'),
    dict(type='Resize', scale=(32, 32), keep_ratio=False),
    dict(type='FormatShape', input_format='NCTHW'),
    dict(type='PackActionInputs'),
]

train_dataloader = dict(
    batch_size=8,
    num_workers=2,
    persistent_workers=False,
    sampler=dict(type='DefaultSampler', shuffle=True),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file='train_list_videos.txt',
        data_prefix=dict(video='videos'),
        pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=8,
    num_workers=2,
    persistent_workers=False,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file='val_list_videos.txt',
        data_prefix=dict(video='videos'),
        pipeline=test_pipeline,
        test_mode=True))
# Top-1 only: with 3 classes top-5 is always 1.
val_evaluator = dict(type='AccMetric', metric_options=dict(top_k_accuracy=dict(topk=(1, ))))

test_dataloader = val_dataloader
test_evaluator = val_evaluator
