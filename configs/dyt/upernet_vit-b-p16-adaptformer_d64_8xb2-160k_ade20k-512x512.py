# Baseline: AdaptFormer on UperNet (AdapterViT): the frozen ViT-B of the DyT
# config with its adapters of d = 64, no token dispatch, in DyTEncoderDecoder,
# whose rate term is 0 without dispatch
# (../_base_/models/upernet_adaptformer-vit-b-d64_mln.py); the data, schedule
# and runtime of upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py.
_base_ = [
    '../_base_/models/upernet_adaptformer-vit-b-d64_mln.py',
    './_base_/upernet_8xb2-160k_ade20k-512x512.py',
]
crop_size = (512, 512)
model = dict(
    data_preprocessor=dict(size=crop_size),
    decode_head=dict(num_classes=150),
    auxiliary_head=dict(num_classes=150),
    test_cfg=dict(mode='slide', crop_size=crop_size, stride=(341, 341)))
