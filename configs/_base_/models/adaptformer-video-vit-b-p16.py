# AdaptFormer on the frames of video-vit-b-p16.py: the ViT frozen, an adapter with
# d = 64, s = 0.1, dropout 0.1 in every block (main_video.py l. 214-223), no token
# dispatch. dyt-video-vit-b-p16.py adds DyT's dispatchers to this model; without
# them DyTRecognizer3D trains with the head's cross-entropy alone.
_base_ = ['./video-vit-b-p16.py']
model = dict(
    backbone=dict(
        vit=dict(
            type='AdapterViT',
            adapter_cfg=dict(bottleneck=64, scale=0.1, dropout=0.1, num_experts=1),
            freeze_pretrained=True)))
