# What each pretrained ViT family changes in a DyT config (the ViT-B/16 configs' backbone and input
# normalisation): the backbone options, where its converted weights are, and its mean/std (RGB,
# 0-255). A family config inherits this file next to its task config and picks its family, e.g.
#   _base_ = ['./upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py',
#             '../_base_/models/vit-families.py']
#   model = dict(data_preprocessor={{_base_.clip_norm}}, backbone={{_base_.clip_b16}})
# Weights are converted once (timm's or the original layout, read directly):
#   python tools/model_converters/timm2mmvitdyn.py SRC checkpoints/<name>.pth
imagenet_norm = dict(mean=[123.675, 116.28, 103.53], std=[58.395, 57.12, 57.375])
clip_norm = dict(
    mean=[122.770938, 116.7460125, 104.09373615], std=[68.5005327, 66.6321579, 70.32316305])

# DINOv2 ViT-B/14 (ImageNet mean/std): 14 x 14 patches, LayerScale, the 518 checkpoint's 37 x 37
# position embedding resized on load as timm does (bicubic, anti-aliased). SRC: timm's
# vit_base_patch14_dinov2.lvd142m or the original dinov2_vitb14_pretrain.pth. With registers
# (dinov2_vitb14_reg4): add num_reg_tokens=4. ViT-S/14, ViT-L/14: arch='small' / 'large' (and the
# head's or neck's in_channels 384 / 1024).
dinov2_b14 = dict(
    patch_size=14,
    layer_scale_init_value=1e-5,
    interpolate_antialias=True,
    init_cfg=dict(checkpoint='checkpoints/dinov2-vit-base-p14.pth'))
# Segmentation at 512 x 512 crops (not a multiple of 14): training crops are padded to 518 (label
# 255 in the padding), test images to a multiple of 14.
dinov2_seg_preprocessor = dict(size=(518, 518), test_cfg=dict(size_divisor=14), **imagenet_norm)

# OpenAI CLIP ViT-B/16 image tower (CLIP mean/std): a LayerNorm before the blocks (no
# patch-projection bias), LayerNorm eps 1e-5, QuickGELU; the class token after the final norm
# (CLIP's ln_post); CLIP's projection to the joint embedding is not used. SRC: OpenAI's ViT-B-16.pt
# is a TorchScript archive: save its state_dict() with torch.save first (or use timm's
# vit_base_patch16_clip_quickgelu_224.openai). ViT-L/14: arch='large', patch_size=14. LAION towers
# (timm's vit_base_patch16_clip_224.laion2b): act_cfg=dict(type='GELU').
clip_b16 = dict(
    pre_norm=True,
    norm_cfg=dict(type='LN', eps=1e-5),
    act_cfg=dict(type='QuickGELU'),
    init_cfg=dict(checkpoint='checkpoints/clip-vit-base-p16.pth'))

# MAE ViT-B/16 (ImageNet mean/std): the plain ViT. SRC: the official mae_pretrain_vit_base.pth (timm
# layout; timm's vit_base_patch16_224.mae).
mae_b16 = dict(init_cfg=dict(checkpoint='checkpoints/mae-vit-base-p16.pth'))

# Distilled DeiT-B/16 (ImageNet mean/std): the distillation token, a second extra token, never
# dispatched. SRC: deit_base_distilled_patch16_224-df68dfff.pth (the converter keeps the token).
# DeiT-B without it: the plain ViT.
deit_b16_distilled = dict(
    dist_token=True, init_cfg=dict(checkpoint='checkpoints/deit-base-distilled-p16.pth'))
