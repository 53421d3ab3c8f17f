# DyT on video as the public DyT video code builds it (docs/video.md): the frozen,
# adapted frames of adaptformer-video-vit-b-p16.py with an MLP token dispatcher at
# target rate 0.5 (--token_target_ratio 0.5, train_video.sh l. 32) in every block,
# trained with DyT's loss (video-vit-b-p16.py).
_base_ = ['./adaptformer-video-vit-b-p16.py']
model = dict(backbone=dict(vit=dict(type='DyTViT', dispatch='mlp', target_rate=0.5)))
