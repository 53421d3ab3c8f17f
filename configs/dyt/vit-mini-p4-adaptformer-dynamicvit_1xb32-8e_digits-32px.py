# The demo's AdaptFormer + DynamicViT: the digits DyT run with DynamicViT's
# pruning instead of dispatch (start from the trained ViT as that config says).
# 6 blocks: predictors before blocks 2, 3 and 4 (the quarter points 1.5, 3 and
# 4.5 of the paper's 3, 6, 9 of 12, moved to distinct blocks), rho = 0.7:
# 64 -> 44 -> 31 -> 21 patch tokens.
_base_ = ['./vit-mini-p4-dyt_1xb32-8e_digits-32px.py']
model = dict(
    type='DynamicViTClassifier',  # its defaults: DynamicViT's official loss
    complete_loss=False,  # the DyT config's classifier sets it
    # DynamicViT is an AdaptFormer ViT (no dispatch settings): the backbone is
    # the DyT config's without them.
    backbone=dict(
        _delete_=True,
        type='DynamicViT',
        arch=dict(embed_dims=192, num_layers=6, num_heads=6, feedforward_channels=768),
        img_size=32,
        patch_size=4,
        drop_path_rate=0.0,
        out_type='cls_token',
        adapter_cfg=dict(bottleneck=16, scale=1.0, dropout=0.1, num_experts=1),
        prune_loc=(2, 3, 4)))
