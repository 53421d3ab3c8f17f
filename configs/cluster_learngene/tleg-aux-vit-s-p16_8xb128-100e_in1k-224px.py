# TLEG's auxiliary model (Aux-Net) for the DeiT-S-sized TLEG learngene: a ViT
# of DeiT-S's widths (384, 6 heads of 64, FFN 1536) whose 12 layers are linear
# expansions theta_A + l / 12 theta_B (l = 0..11) of two learned blocks
# (LinearExpansionViT), trained on ImageNet-1k. Then its theta_A and theta_B:
#   python tools/learngene/extract_baseline_learngene.py tleg \
#       configs/cluster_learngene/tleg-aux-vit-s-p16_8xb128-100e_in1k-224px.py \
#       work_dirs/tleg-aux-vit-s-p16_8xb128-100e_in1k-224px/epoch_100.pth \
#       --out checkpoints/tleg-learngene_vit-s-p16_in1k.pth
# Where this differs from TLEG: TLEG trains the Aux-Net with soft distillation
# from a pretrained teacher, and mmpretrain has no teacher-student
# classifier, so this trains with the labels (and the descendants' recipe:
# label smoothing, Mixup, CutMix, RandAugment, random erasing); neither the
# spec nor the Cluster-Learngene paper gives the Aux-Net's schedule, so it uses
# the From-Scratch baselines' 100 epochs.
_base_ = [
    './_base_/models/deit-s-p16.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    './_base_/schedules/adamw_cosine_50e_bs1024.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(
    backbone=dict(
        _delete_=True,
        type='LinearExpansionViT',
        arch='deit-s',
        img_size=224,
        patch_size=16,
        drop_path_rate=0.1,
        out_type='cls_token'))
train_cfg = dict(max_epochs=100)
# 8 GPUs x 128 images = the schedule's batch of 1024 (1,251 iterations an epoch).
train_dataloader = dict(batch_size=128)
default_hooks = dict(logger=dict(interval=100))
