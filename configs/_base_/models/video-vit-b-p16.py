# The video model of the public DyT video code (NUS-HPC-AI-Lab/Dynamic-Tuning
# d1744f0, video_models/video_vision_transformer_IN21K.py, main_video.py;
# docs/video.md) with plain frames: each frame of a clip through the ImageNet-21k
# ViT-B/16, every weight trained (the public --fulltune, main_video.py l. 287), no
# drop path (--drop_path 0.0, train_video.sh l. 24); the tokens of all frames
# attentively pooled by one learned query (AttentivePoolingHead) before the
# classifier, re-initialised with std 0.01 (main_video.py l. 280). The full
# fine-tuning baseline; adaptformer-video-vit-b-p16.py adds the adapters and
# dyt-video-vit-b-p16.py DyT's dispatchers. The pretrained ViT as in
# vit-b-p16.py (checkpoints/vit-base-p16_in21k.pth); its normalisation,
# mean = std = 127.5 (video_datasets.py l. 11-13), sits in the model.
custom_imports = dict(imports=['mmvitdyn'], allow_failed_imports=False)
model = dict(
    type='DyTRecognizer3D',
    # DyT's loss (engine_finetune.py l. 140-156): CE of the dynamic and of the
    # complete pass, KL of the two, 2 x the rate loss (token_ratio=2., main_video.py
    # l. 234); the terms beyond CE act only where the frames dispatch (DyT).
    complete_loss=True,
    distill_loss=True,
    rate_loss_weight=2.0,
    backbone=dict(
        type='DyTVideoViT',
        vit=dict(
            type='ViT',
            arch='base',
            img_size=224,
            patch_size=16,
            drop_path_rate=0.0,
            init_cfg=dict(
                type='Pretrained', checkpoint='checkpoints/vit-base-p16_in21k.pth', prefix=None))),
    cls_head=dict(
        type='AttentivePoolingHead',
        num_classes=400,
        in_channels=768,
        num_heads=12,
        average_clips='score'),
    data_preprocessor=dict(
        type='ActionDataPreprocessor', mean=[127.5] * 3, std=[127.5] * 3, format_shape='NCTHW'))
