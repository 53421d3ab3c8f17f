# The From-Scratch baseline of the 12-layer, 6-head DeiT-B descendants (Tables 1 and 2): a plain
# ViT of their shape (768 wide, 12 layers of 6 heads of 64, FFN 3072; 71.6M backbone parameters,
# the descendant's T-Params) with random weights and nothing from the learngene's structure (no
# tied FFN group, no shared heads), with DeiT-B's classifier and recipe.
_base_ = ['./deit-b-p16.py']
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
