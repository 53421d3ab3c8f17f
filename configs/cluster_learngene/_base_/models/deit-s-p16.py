# DeiT-S/16 (384 wide, 12 layers of 6 heads of 64) for ImageNet-1k with the
# paper's recipe, as deit-b-p16.py. The backbone starts from timm's DeiT-S
# checkpoint (deit_small_patch16_224-cd65a155.pth loads directly): the
# ancestry of the DeiT-S learngenes and the Pretraining-Finetuning baseline
# of the DeiT-S descendants.
_base_ = ['./deit-b-p16.py']
model = dict(
    backbone=dict(
        arch='deit-s', init_cfg=dict(checkpoint='checkpoints/deit_small_patch16_224-cd65a155.pth')),
    head=dict(in_channels=384))
