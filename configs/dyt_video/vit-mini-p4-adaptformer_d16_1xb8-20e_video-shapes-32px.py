# AdaptFormer baseline of the video-shapes DyT config (AdapterViT inside
# DyTVideoViT): the same frozen 6-layer ViT, d=16 adapters, pooling head and
# recipe, no token dispatch (every token of every frame runs every block part);
# DyTRecognizer3D then trains with the plain cross-entropy. Seed 0 (the runtime's).
#   python tools/train.py \
#       configs/dyt_video/vit-mini-p4-adaptformer_d16_1xb8-20e_video-shapes-32px.py
_base_ = ['./vit-mini-p4-dyt_d16_1xb8-20e_video-shapes-32px.py']
model = dict(
    backbone=dict(
        vit=dict(
            _delete_=True,
            type='AdapterViT',
            arch=dict(embed_dims=192, num_layers=6, num_heads=6, feedforward_channels=768),
            img_size=32,
            patch_size=4,
            adapter_cfg=dict(bottleneck=16, scale=1.0, dropout=0.1),
            allow_random_frozen=True)))
