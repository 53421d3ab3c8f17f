# DyT on ViT-B/16 at 224, the paper's default: the AdaptFormer model of
# adaptformer-vit-b-p16.py (the ImageNet-21k ViT of vit-b-p16.py frozen, with
# its weights and input normalisation, an adapter with d = 64, s = 0.1 in every
# block: the full-data setting; VTAB-1K configs override d = 16, s = 1.0) with
# MLP dispatch at target rate r = 0.5 in every block, trained with DyT's loss.
_base_ = ['./adaptformer-vit-b-p16.py']
model = dict(
    # L = CE(dynamic) + CE(complete) + KL(complete || dynamic) + 2 * L_rate
    complete_loss=True,
    distill_loss=True,
    rate_loss_weight=2.0,
    backbone=dict(type='DyTViT', dispatch='mlp', target_rate=0.5))
