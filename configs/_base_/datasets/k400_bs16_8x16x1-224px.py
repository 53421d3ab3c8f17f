# Kinetics-400 as the public DyT video code reads it (NUS-HPC-AI-Lab/Dynamic-Tuning
# d1744f0, video_datasets/video_datasets.py l. 20-46 and video_datasets/k400.py;
# docs/video.md, "The training recipe"), through mmaction2's own transforms:
# mmaction2's VideoDataset layout (data/kinetics400/videos_{train,val}/ and
# kinetics400_{train,val}_list_videos.txt, "path label" lines), decoded with decord
# (k400.py l. 115-116). Normalisation (mean = std = 127.5) is the model's
# (configs/_base_/models/dyt-video-vit-b-p16.py).
_base_ = ['./video-list-file_bs16.py']
data_root = 'data/kinetics400'

# 8 frames 16 apart from a random start (video_datasets.py l. 28-29, k400.py
# l. 317-318); random short-side scale jitter in [224, 258] = 224 x [1.0, 1.15]
# (video_datasets.py l. 30-31, k400.py l. 149-156) then a random 224 crop, and a
# horizontal flip with p = 0.5 (mirror=True, k400.py l. 163-164), bicubic as the
# public default (k400.py l. 39). Differs: a video shorter than 121 frames repeats
# its last frame in mmaction2 (out_of_bound_opt='repeat_last'), the public code
# then samples i x 16 up to the end and repeats the last index (k400.py l. 313-315).
train_pipeline = [
    dict(type='DecordInit'),
    dict(
        type='SampleFrames',
        clip_len=8,
        frame_interval=16,
        num_clips=1,
        out_of_bound_opt='repeat_last'),
    dict(type='DecordDecode'),
    dict(type='RandomRescale', scale_range=(224, 258), interpolation='bicubic'),
    dict(type='RandomCrop', size=224),
    dict(type='Flip', flip_ratio=0.5),
    dict(type='FormatShape', input_format='NCTHW'),
    dict(type='PackActionInputs'),
]
# 3 temporal clips x 1 centre crop of the short side resized to 224
# (video_datasets.py l. 35-46, k400.py l. 183-207 and 281-287); the model averages
# the 3 views' scores (average_clips='score', engine_finetune.py l. 301-305).
# Differs: mmaction2 centres each clip in its third of the video, the public code
# spreads the 3 starts from the first to the last possible one (k400.py l. 238-247).
test_pipeline = [
    dict(type='DecordInit'),
    dict(
        type='SampleFrames',
        clip_len=8,
        frame_interval=16,
        num_clips=3,
        test_mode=True,
        out_of_bound_opt='repeat_last'),
    dict(type='DecordDecode'),
    dict(type='Resize', scale=(-1, 224), interpolation='bicubic'),
    dict(type='CenterCrop', crop_size=224),
    dict(type='FormatShape', input_format='NCTHW'),
    dict(type='PackActionInputs'),
]

# Batch (16 clips per GPU), workers, samplers and metric: video-list-file_bs16.py.
train_dataloader = dict(
    dataset=dict(
        data_root=data_root,
        ann_file='kinetics400_train_list_videos.txt',
        data_prefix=dict(video='videos_train'),
        pipeline=train_pipeline))
val_dataloader = dict(
    dataset=dict(
        data_root=data_root,
        ann_file='kinetics400_val_list_videos.txt',
        data_prefix=dict(video='videos_val'),
        pipeline=test_pipeline))
test_dataloader = val_dataloader
