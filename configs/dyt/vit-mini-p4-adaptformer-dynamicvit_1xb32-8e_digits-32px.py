# The demo's AdaptFormer + DynamicViT: the digits DyT run with DynamicViT's
# pruning instead of dispatch (start from the trained ViT as that config says).
# 6 blocks: predictors before blocks 2, 3 and 4 (the quarter points 1.5, 3 and
# 4.5 of the paper's 3, 6, 9 of 12, moved to distinct blocks), rho = 0.7:
# 64 -> 44 -> 31 -> 21 patch tokens.
_base_ = ['./_base_/vit-mini-p4-adaptformer_digits-recipe.py']
model = dict(
    type='DynamicViTClassifier',  # its defaults: DynamicViT's official loss
    # DynamicViT is an AdapterViT: the recipe's AdaptFormer backbone, pruning added.
    backbone=dict(type='DynamicViT', prune_loc=(2, 3, 4)))
