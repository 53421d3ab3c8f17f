# The ImageFolder config of docs/finetune_custom_data.md on a CPU: the ImageNet-21k
# ViT-Ti/16 (192 wide, 3 heads, 12 blocks: 1/14 of ViT-B/16's FLOPs) in place of
# ViT-B/16, batch 32, 10 epochs (1 of warm-up, then cosine). The rest is the
# guide's config: DyT's VTAB-1K recipe (adapters d = 16, MLP dispatch at 0.5,
# AdamW lr 1e-3 at batch 64, scaled by auto_scale_lr with --auto-scale-lr).
_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_my-set-224px.py']
model = dict(
    backbone=dict(arch='tiny', init_cfg=dict(checkpoint='checkpoints/vit-tiny-p16_in21k.pth')),
    head=dict(in_channels=192))
train_dataloader = dict(batch_size=32, num_workers=2)
val_dataloader = dict(batch_size=32, num_workers=2)
test_dataloader = val_dataloader
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, end=1, convert_to_iter_based=True),
    dict(
        type='CosineAnnealingLR',
        eta_min=1e-5,
        by_epoch=True,
        begin=1,
        end=10,
        convert_to_iter_based=True)
]
train_cfg = dict(max_epochs=10)
