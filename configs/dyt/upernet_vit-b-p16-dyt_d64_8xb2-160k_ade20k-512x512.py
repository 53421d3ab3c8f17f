# DyT on UperNet (the paper's segmentation experiment): a frozen ViT-B/16 with MLP token dispatch at
# target rate 0.5 and adapters of d = 64, blocks 3, 5, 7, 11 into mmseg's multi-level neck, UPerHead
# and an FCN auxiliary head (weight 0.4); ADE20K at 512x512 crops, 160k iterations at batch 16,
# AdamW lr 1e-3 with poly decay, sliding-window test. Metric: mIoU; the activation rates are logged
# next to it.
#   bash tools/dist_train.sh \
#       configs/dyt/upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py 8
#   bash tools/dist_test.sh configs/dyt/upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py CKPT 8
# Baselines: upernet_vit-b-p16-adaptformer_d64_8xb2-160k_ade20k-512x512.py,
# upernet_vit-b-p16-full-ft_8xb2-160k_ade20k-512x512.py; with the 4-expert MoE-adapter:
# upernet_vit-b-p16-dyt-moe4_d64_8xb2-160k_ade20k-512x512.py.
_base_ = [
    '../_base_/models/upernet_dyt-vit-b-d64_mln.py',
    './_base_/upernet_8xb2-160k_ade20k-512x512.py',
]
crop_size = (512, 512)
model = dict(
    data_preprocessor=dict(size=crop_size),
    decode_head=dict(num_classes=150),
    auxiliary_head=dict(num_classes=150),
    test_cfg=dict(mode='slide', crop_size=crop_size, stride=(341, 341)))
