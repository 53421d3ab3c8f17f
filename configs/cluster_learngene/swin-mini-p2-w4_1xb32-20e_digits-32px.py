# A tiny Swin Transformer on the digits demo set (mmpretrain's
# SwinTransformer: 16 wide, depths 2 / 2, 2 / 4 heads of 8, 2x2 patches,
# windows of 4; the 16x16 and 8x8 feature maps are whole windows, shifted in
# every second block), trained like the demo ViT. The Swin ancestry of the
# learngene tests; its learngene (MAD inside the windows, clustering per
# block, FFN groups within a stage):
#   python tools/train.py configs/cluster_learngene/swin-mini-p2-w4_1xb32-20e_digits-32px.py
#   python tools/learngene/build_learngene.py \
#       configs/cluster_learngene/swin-mini-p2-w4_1xb32-20e_digits-32px.py \
#       work_dirs/swin-mini-p2-w4_1xb32-20e_digits-32px/epoch_20.pth \
#       --num-images 359 --eps 0.5 --out work_dirs/learngenes/swin-mini-p2-w4_digits-32px.pth
_base_ = ['../vit/vit-mini-p4_1xb32-20e_digits-32px.py']
model = dict(
    backbone=dict(
        _delete_=True,
        type='SwinTransformer',
        arch=dict(embed_dims=16, depths=[2, 2], num_heads=[2, 4]),
        img_size=32,
        patch_size=2,
        window_size=4,
        drop_path_rate=0.1,
        out_indices=(1, )),
    neck=dict(_delete_=True, type='GlobalAveragePooling'),
    head=dict(in_channels=32))
optim_wrapper = dict(
    paramwise_cfg=dict(custom_keys={'.relative_position_bias_table': dict(decay_mult=0.0)}))
