# TLEG's auxiliary model (Aux-Net) for the DeiT-S-sized TLEG learngene, as
# TLEG's public code trains Aux-S (github.com/AlphaXia/TLEG at 6e30a5c): a ViT
# of DeiT-S's widths (384, 6 heads of 64, FFN 1536) whose 12 layers are linear
# expansions theta_A + l / 12 theta_B (l = 0..11) of two learned blocks
# (LinearExpansionViT), trained on ImageNet-1k by distillation from LeViT-384.
# Then its theta_A and theta_B:
#   python tools/learngene/extract_baseline_learngene.py tleg \
#       configs/cluster_learngene/tleg-aux-vit-s-p16_levit-384-distill_8xb64-150e_in1k-224px.py \
#       work_dirs/tleg-aux-vit-s-p16_levit-384-distill_8xb64-150e_in1k-224px/epoch_150.pth \
#       --out checkpoints/tleg-learngene_vit-s-p16_in1k.pth
# Each setting and where TLEG's code sets it:
# - No class token: aux_models.py:23 (use_cls_token=False); the position
#   embedding covers the patches only (TLEG_vit.py:264) and the head reads the
#   mean of the final-normed tokens (TLEG_vit.py:347, 292-293, 356-358):
#   out_type='avg_featmap' with the final norm.
# - Drop path 0.0, 150 epochs, 4 GPUs x 128 images: README.md:34-38 (the Aux-S
#   command); here 8 x 64, the same total batch of 512 and lr 5e-4 x 512 / 512
#   (main.py:79 and 327-329); 5 warm-up epochs and the rest of the DeiT recipe
#   are main.py's defaults, as in the descendants' recipe.
# - Distillation: README.md:40-41, --teacher-model levit_384 --distillation-type
#   soft --distillation-alpha 1.0, tau 1.0 (main.py:152); losses.py:47-63: the
#   loss is alpha x tau^2 KL(teacher || student) over the number of logits, plus
#   (1 - alpha) x the label loss, here 0 (DistillationImageClassifier). The
#   teacher is timm's levit_384 (the distilled LeViT-384, evaluated as the mean
#   of its two heads) loaded from --teacher-path: the official LeViT-384
#   weights, which mmpretrain's levit-384_3rdparty_in1k converts (download it
#   to checkpoints/ from mmpretrain's LeViT model zoo).
_base_ = [
    './_base_/models/deit-s-p16.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    './_base_/schedules/adamw_cosine_50e_bs1024.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(
    type='DistillationImageClassifier',
    backbone=dict(
        _delete_=True,
        type='LinearExpansionViT',
        arch='deit-s',
        img_size=224,
        patch_size=16,
        drop_path_rate=0.0,
        class_token=False,
        out_type='avg_featmap'),
    distillation_type='soft',
    alpha=1.0,
    tau=1.0,
    teacher=dict(
        type='ImageClassifier',
        backbone=dict(
            type='LeViT',
            arch='384',
            img_size=224,
            patch_size=16,
            attn_ratio=2,
            mlp_ratio=2,
            out_indices=(2, )),
        neck=dict(type='GlobalAveragePooling'),
        head=dict(type='LeViTClsHead', num_classes=1000, in_channels=768, distillation=True),
        init_cfg=dict(
            type='Pretrained',
            checkpoint='checkpoints/levit-384_3rdparty_in1k_20230117-f3539cce.pth')))
optim_wrapper = dict(optimizer=dict(lr=5e-4 * 512 / 512))
train_cfg = dict(max_epochs=150)
auto_scale_lr = dict(base_batch_size=512)
# 8 GPUs x 64 images = TLEG's batch of 512 (about 2,503 iterations an epoch).
train_dataloader = dict(batch_size=64)
default_hooks = dict(logger=dict(interval=100))
