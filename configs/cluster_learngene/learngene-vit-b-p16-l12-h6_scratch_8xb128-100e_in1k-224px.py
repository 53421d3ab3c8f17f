# From-Scratch baseline of Table 1: a plain ViT of the L12-H6 descendant's
# shape (768 wide, 12 layers of 6 heads of 64, FFN 3072; 71.6M backbone
# parameters, the descendant's T-Params) with random weights and nothing from
# the learngene's structure (no tied FFN group, no shared heads), trained 100
# epochs instead of 50 with the same recipe.
_base_ = ['./learngene-vit-b-p16-l12-h6_deit-b-eps10_8xb128-50e_in1k-224px.py']
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
train_cfg = dict(max_epochs=100)
