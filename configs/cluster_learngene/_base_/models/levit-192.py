# LeViT-192 (mmpretrain's: a convolutional stem of stride 16, then 3 stages of
# 4 attention blocks and MLPs, 192 / 288 / 384 wide, 3 / 5 / 6 heads of key
# width 32, a subsample attention between stages) for classification with the
# recipe of the LeViT rows of the rebuttal (R4): LeViT-192's own stochastic
# depth (none), label smoothing 0.1 and Mixup 0.8 / CutMix 1.0 (mmpretrain's
# LeViT base, as the paper's recipe), the classifier without LeViT's
# distillation head (mmpretrain cannot train it). Random weights: the
# From-Scratch row; the Pretraining-Finetuning row loads the ancestry, and the
# learngene descendants (learngene-levit-192.py) replace the backbone.
_base_ = ['mmpretrain::_base_/models/levit-256-p16.py']
custom_imports = dict(imports=['mmvitdyn'], allow_failed_imports=False)
model = dict(
    backbone=dict(arch='192', img_size=224, drop_path_rate=0., out_indices=(2, )),
    head=dict(
        in_channels=384,
        distillation=False,
        loss=dict(type='LabelSmoothLoss', label_smooth_val=0.1, mode='original')))
