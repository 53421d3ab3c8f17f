# AdaptFormer (Chen et al., 2022) on the ViT-B/16 of vit-b-p16.py (its weights
# and input normalisation): the ViT frozen, an adapter with d = 64, s = 0.1 in
# every block (DyT's full-data setting; VTAB-1K configs override d = 16,
# s = 1.0), no token dispatch. dyt-vit-b-p16.py adds DyT's dispatchers to this
# model. In DyTImageClassifier, whose DyT terms need dispatch, it trains with
# the head's cross-entropy alone.
_base_ = ['./vit-b-p16.py']
model = dict(
    type='DyTImageClassifier',
    backbone=dict(
        type='AdapterViT',
        adapter_cfg=dict(bottleneck=64, scale=0.1, dropout=0.1, num_experts=1),
        freeze_pretrained=True))
