# Something-Something v2 as the public DyT video code reads it
# (NUS-HPC-AI-Lab/Dynamic-Tuning d1744f0, video_datasets/video_datasets.py
# l. 51-79 and video_datasets/sthv2_dataset.py; docs/video.md, "The training
# recipe"), through mmaction2's own transforms: mmaction2's VideoDataset layout
# (data/sthv2/videos/*.webm and sthv2_{train,val}_list_videos.txt), decoded with
# PyAV (sthv2_dataset.py l. 114-116). Normalisation (mean = std = 127.5) is the
# model's (configs/_base_/models/dyt-video-vit-b-p16.py).
_base_ = ['./video-list-file_bs16.py']
data_root = 'data/sthv2'

# TSN-style: the video cut into 8 equal segments, one random frame of each
# (sampling_rate=0, video_datasets.py l. 57-59; sthv2_dataset.py l. 308-312):
# mmaction2's UniformSample computes the same indices.
# RandAugment 'rand-m7-n4-mstd0.5-inc1' on the whole frames, one draw per clip
# (video_datasets.py l. 58, sthv2_dataset.py l. 128-138). mmaction2 offers it as
# PytorchVideoWrapper(op='RandAugment') (pytorchvideo, which does not import with
# torchvision >= 0.17, and is not installed) or TorchVisionWrapper(op='RandAugment')
# (torchvision's): the latter here, 4 ops at magnitude 7 of 10 (num_magnitude_bins=11
# puts 7 at 7/10 of each op's range, as the public _MAX_LEVEL = 10,
# rand_augment.py l. 46), its severities increasing with the magnitude (as 'inc1').
# Differs from the public one: no magnitude noise (mstd0.5, rand_augment.py
# l. 364-375), every drawn op applied (public: each with p = 0.5, l. 463),
# torchvision's 14 ops (with Identity, without Invert and SolarizeAdd; public
# l. 410-426) and nearest interpolation for the geometric ops (public bicubic).
# Then a random resized crop of area [0.08, 1] (aspect [3/4, 4/3]) resized to 224
# (video_datasets.py l. 61-62, sthv2_dataset.py l. 142-146), no flip (mirror=False).
train_pipeline = [
    dict(type='PyAVInit'),
    dict(type='UniformSample', clip_len=8, num_clips=1),
    dict(type='PyAVDecode'),
    dict(
        type='TorchVisionWrapper', op='RandAugment', num_ops=4, magnitude=7, num_magnitude_bins=11),
    dict(type='RandomResizedCrop', area_range=(0.08, 1.0)),
    dict(type='Resize', scale=(224, 224), keep_ratio=False, interpolation='bicubic'),
    dict(type='FormatShape', input_format='NCTHW'),
    dict(type='PackActionInputs'),
]
# 1 clip (a frame from the middle of each segment) x 3 crops (left, centre and
# right, or top, centre and bottom, of the short side resized to 224)
# (video_datasets.py l. 68-79, sthv2_dataset.py l. 195-207 and 289-299); the model
# averages the 3 views' scores (average_clips='score'). mmaction2's test-mode
# UniformSample takes start + int(segment / 2), the public code
# (start + end) // 2 (sthv2_dataset.py l. 230-234): at most one frame apart.
test_pipeline = [
    dict(type='PyAVInit'),
    dict(type='UniformSample', clip_len=8, num_clips=1, test_mode=True),
    dict(type='PyAVDecode'),
    dict(type='Resize', scale=(-1, 224), interpolation='bicubic'),
    dict(type='ThreeCrop', crop_size=224),
    dict(type='FormatShape', input_format='NCTHW'),
    dict(type='PackActionInputs'),
]

# Batch (16 clips per GPU), workers, samplers and metric: video-list-file_bs16.py.
train_dataloader = dict(
    dataset=dict(
        data_root=data_root,
        ann_file='sthv2_train_list_videos.txt',
        data_prefix=dict(video='videos'),
        pipeline=train_pipeline))
val_dataloader = dict(
    dataset=dict(
        data_root=data_root,
        ann_file='sthv2_val_list_videos.txt',
        data_prefix=dict(video='videos'),
        pipeline=test_pipeline))
test_dataloader = val_dataloader
