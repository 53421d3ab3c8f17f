# AdaptFormer + DynamicViT on VTAB-1K: the DyT authors' baseline of their
# review (bottleneck d = 8; VTAB-1K's s = 1.0 and recipe of the DyT VTAB
# configs), DynamicViT's token pruning instead of token dispatch. The 'cifar'
# task; another task: set its data root and class count as a task config does.
_base_ = ['./vit-b-p16-adaptformer_d16_1xb64-100e_vtab1k-224px.py']
model = dict(
    # DynamicViT's loss and pruning are its classes' defaults, as in
    # vit-b-p16-adaptformer-dynamicvit_d64_8xb128-100e_cifar100-224px.py (the
    # review does not give its rate: rho = 0.7 before blocks 3, 6 and 9).
    type='DynamicViTClassifier',
    # DynamicViT is an AdapterViT: the AdaptFormer backbone, pruning added.
    # "The bottleneck dimension is set to 8" (the authors' review answer, W5).
    backbone=dict(type='DynamicViT', adapter_cfg=dict(bottleneck=8)))
