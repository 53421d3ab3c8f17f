# DeiT-Ti/16 (192 wide, 12 layers of 3 heads of 64) for ImageNet-1k with the
# paper's recipe, as deit-b-p16.py. The backbone starts from timm's DeiT-Ti
# checkpoint (deit_tiny_patch16_224-a1311bcf.pth loads directly): the
# ancestry of the DeiT-Ti learngene and the Pretraining-Finetuning baseline
# of the DeiT-Ti descendants.
_base_ = ['./deit-b-p16.py']
model = dict(
    backbone=dict(
        arch='deit-t', init_cfg=dict(checkpoint='checkpoints/deit_tiny_patch16_224-a1311bcf.pth')),
    head=dict(in_channels=192))
