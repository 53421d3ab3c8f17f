# DyT on UperNet, ADE20K, as the public DyT segmentation code runs it
# (configs/beit/upernet/our_vit.py and tools/seg_train.sh of
# github.com/NUS-HPC-AI-Lab/Dynamic-Tuning): the data, schedule and test of the mmseg-style
# upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py (512x512 crops of mmseg's ADE20K
# recipe, 160k iterations at batch 16 with the public optimiser and lr schedule, sliding test of
# 512 crops at stride 341) with the model of ../_base_/models/upernet_dyt-vit-b-d64_pyramid.py.
#   bash tools/dist_train.sh \
#       configs/dyt/upernet_vit-b-p16-dyt_d64_pyramid_8xb2-160k_ade20k-512x512.py 8
#   bash tools/dist_test.sh \
#       configs/dyt/upernet_vit-b-p16-dyt_d64_pyramid_8xb2-160k_ade20k-512x512.py CKPT 8
#
# The model is built as the public code does (dense_tasks/Segmentation:
# backbone/segmentation_vision_transformer_IN21K.py, configs/beit/upernet/
# our_vit.py, tools/seg_train.py). It keeps the DyTViT of the mmseg-style
# model (../_base_/models/upernet_dyt-vit-b-d64_mln.py: frozen, MLP dispatch at
# rate 0.5, adapter d = 64, s = 0.1, dropout 0.1, Gumbel tau 5, drop_path
# 0.1, in21k weights, input mean = std = 127.5). What differs:
# - the outputs of blocks 3, 5, 7, 11, without the final norm, become a
#   pyramid inside the backbone, as BEiT does: x4 (2x2 stride-2 transposed
#   conv, GELU, transposed conv), x2 (one transposed conv), x1, x0.5 (2x2 max
#   pool), 768 channels each and no norm (the public code comments its
#   SyncBN out); trained from PyTorch's default init, as there;
# - no neck; UPerHead with 768 channels (the public config's), the FCN
#   auxiliary head on the x1 level (in_index 2, 256 channels, weight 0.4, as
#   BEiT's UperNet base the public code inherits).
# Same values, another place: the public backbone (img_size=512) resizes the
# 14x14 position embedding to 32x32 once at load, DyTViT (img_size=224) per
# input, both bicubic without corner alignment.
# Loss: decode CE + 0.4 aux CE + 2 x rate loss (DyTEncoderDecoder's defaults:
# no complete-model or distillation term, as the public code).
# Not reproduced: the public config sets use_rel_pos_bias=True, which gives
# every block a BEiT relative position bias table (zero-initialised, absent
# from the in21k checkpoint, so its script trains it); the paper does not
# mention it and DyTViT has no such table.
_base_ = [
    '../_base_/models/upernet_dyt-vit-b-d64_pyramid.py',
    './_base_/upernet_8xb2-160k_ade20k-512x512.py',
]
crop_size = (512, 512)
model = dict(
    data_preprocessor=dict(size=crop_size),
    decode_head=dict(num_classes=150),
    auxiliary_head=dict(num_classes=150),
    test_cfg=dict(mode='slide', crop_size=crop_size, stride=(341, 341)))
