# From-Scratch baseline on CIFAR-100 (Table 2): a plain ViT of the 12-layer,
# 6-head descendant's shape (heads of 64, 768 wide, FFN 3072) with random
# weights and nothing from the learngene, with the same 500-epoch schedule.
_base_ = ['./learngene-vit-b-p16-l12-h6_deit-b-eps10_8xb64-500e_cifar100-224px.py']
model = dict(
    backbone=dict(
        _delete_=True,
        type='ViT',
        arch=dict(
            embed_dims=768, num_layers=12, num_heads=6, head_dim=64, feedforward_channels=3072),
        img_size=224,
        patch_size=16,
        drop_path_rate=0.1,
        out_type='cls_token'))
