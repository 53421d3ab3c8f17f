# AdaptFormer baseline: DyT without token dispatch (every token runs every
# block part), the same d = 16, s = 1.0 adapters and recipe; DyTImageClassifier
# then trains with the plain cross-entropy. VTAB-1K 'cifar'; other tasks:
# start from the task's config and pass --cfg-options model.backbone.dispatch=None
_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
model = dict(backbone=dict(dispatch=None))
