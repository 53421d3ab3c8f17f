# DyT on UperNet, ADE20K, as the public DyT segmentation code runs it
# (configs/beit/upernet/our_vit.py and tools/seg_train.sh of
# github.com/NUS-HPC-AI-Lab/Dynamic-Tuning): the model of
# ../_base_/models/upernet_dyt-vit-b-d64_pyramid.py (BEiT-style pyramid inside the backbone,
# UPerHead 768), 512x512 crops of mmseg's ADE20K recipe (the public data pipeline), 160k iterations
# at batch 16 with the public optimiser and lr schedule
# (../_base_/schedules/adamw-poly_160k_seg.py), sliding test of 512 crops at stride 341. The
# mmseg-style variant is upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py.
#   bash tools/dist_train.sh \
#       configs/dyt/upernet_vit-b-p16-dyt_d64_pyramid_8xb2-160k_ade20k-512x512.py 8
#   bash tools/dist_test.sh \
#       configs/dyt/upernet_vit-b-p16-dyt_d64_pyramid_8xb2-160k_ade20k-512x512.py CKPT 8
_base_ = [
    '../_base_/models/upernet_dyt-vit-b-d64_pyramid.py',
    '../_base_/datasets/ade20k_512x512.py',
    'mmseg::_base_/default_runtime.py',
    '../_base_/schedules/adamw-poly_160k_seg.py',
]
crop_size = (512, 512)
model = dict(
    data_preprocessor=dict(size=crop_size),
    decode_head=dict(num_classes=150),
    auxiliary_head=dict(num_classes=150),
    test_cfg=dict(mode='slide', crop_size=crop_size, stride=(341, 341)))
train_dataloader = dict(batch_size=2)
