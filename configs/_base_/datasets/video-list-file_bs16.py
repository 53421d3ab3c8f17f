# The loaders of the Kinetics-400 and Something-Something v2 bases
# (k400_bs16_8x16x1-224px.py, ssv2_bs16_u8-224px.py), as the public DyT video code
# batches them (NUS-HPC-AI-Lab/Dynamic-Tuning d1744f0): mmaction2's VideoDataset,
# which reads a list file of "path label" lines; 16 clips per GPU (train_video.sh
# l. 19 and 44), for the validation too (main_video.py l. 201); top-1 / top-5
# accuracy. A data set base adds its data_root, list files, video folder and pipelines.
dataset_type = 'VideoDataset'
train_dataloader = dict(
    batch_size=16,
    num_workers=8,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=True),
    dataset=dict(type=dataset_type))
val_dataloader = dict(
    batch_size=16,
    num_workers=8,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(type=dataset_type, test_mode=True))
val_evaluator = dict(type='AccMetric')
test_dataloader = val_dataloader
test_evaluator = val_evaluator
