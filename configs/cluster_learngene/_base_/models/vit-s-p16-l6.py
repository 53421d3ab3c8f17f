# The From-Scratch baseline of the 6-layer DeiT-S descendants (the variants
# of Table 2's cells; the cells set num_layers=12): a plain ViT of their shape
# (384 wide, 6 layers of 6 heads of 64, FFN 1536; the descendant's T-Params)
# with random weights and nothing from a learngene, with DeiT-S's classifier
# and recipe.
_base_ = ['./deit-s-p16.py']
model = dict(
    backbone=dict(
        _delete_=True,
        type='ViT',
        arch=dict(embed_dims=384, num_layers=6, num_heads=6, feedforward_channels=1536),
        img_size=224,
        patch_size=16,
        drop_path_rate=0.1,
        out_type='cls_token'))
