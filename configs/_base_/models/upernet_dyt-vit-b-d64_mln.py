# UperNet on a ViT-B/16 adapted by DyT, as the paper's segmentation setting:
# the AdaptFormer UperNet of upernet_adaptformer-vit-b-d64_mln.py (the plain
# ViT UperNet of upernet_vit-b_mln.py, frozen, adapter d = 64) with the
# backbone a DyTViT: MLP token dispatch at target rate 0.5.
_base_ = ['./upernet_adaptformer-vit-b-d64_mln.py']

model = dict(backbone=dict(type='DyTViT', dispatch='mlp', target_rate=0.5))
