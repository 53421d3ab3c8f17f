# The demo's DyT model: the ViT trained by configs/vit/vit-mini-p4_1xb32-20e_digits-32px.py
# (frozen; its checkpoint, head included, is the starting point given as
# load_from) plus adapters (d=16, s=1.0 as the VTAB-1K recipe for small data)
# and MLP token dispatchers at a target activation rate of 0.5: the AdaptFormer
# recipe of ./_base_/vit-mini-p4-adaptformer_digits-recipe.py with DyT's dispatch and loss.
#   python tools/train.py configs/dyt/vit-mini-p4-dyt_1xb32-8e_digits-32px.py \
#       --cfg-options load_from=work_dirs/demo/vit-digits/epoch_20.pth
_base_ = ['./_base_/vit-mini-p4-adaptformer_digits-recipe.py']
model = dict(
    complete_loss=True,
    distill_loss=True,
    rate_loss_weight=2.0,
    backbone=dict(type='DyTViT', dispatch='mlp', target_rate=0.5))
