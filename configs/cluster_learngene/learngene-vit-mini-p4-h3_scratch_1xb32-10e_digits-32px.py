# From-Scratch comparison of the digits demo: a plain ViT of the descendant's
# shape (6 layers of 3 heads of 32, 192 wide, FFN 768, 4x4 patches) with
# random weights and nothing from the learngene (no tied FFN group), trained
# for the same 10 epochs. It needs no learngene file.
_base_ = ['./learngene-vit-mini-p4-h3_vit-mini-eps0.1_1xb32-10e_digits-32px.py']
model = dict(
    backbone=dict(
        _delete_=True,
        type='ViT',
        arch=dict(embed_dims=192, num_layers=6, num_heads=3, head_dim=32, feedforward_channels=768),
        img_size=32,
        patch_size=4,
        drop_path_rate=0.1,
        out_type='cls_token'))
