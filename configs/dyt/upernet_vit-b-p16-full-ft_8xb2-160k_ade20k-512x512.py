# Baseline: UperNet with every ViT-B weight fine-tuned (a plain ViT, no
# adapters, no dispatch): lr 1e-4, weight decay 0.05 and layer-wise lr decay
# 0.65, the recipe of mmseg's MAE / BEiT ViT-B UperNet configs (norms, biases
# and position embeddings without weight decay, as there); the public DyT code
# gives no full fine-tuning recipe. The data, schedule and runtime of
# upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py.
_base_ = [
    '../_base_/models/upernet_vit-b_mln.py',
    './_base_/upernet_8xb2-160k_ade20k-512x512.py',
]
crop_size = (512, 512)
model = dict(
    data_preprocessor=dict(size=crop_size),
    decode_head=dict(num_classes=150),
    auxiliary_head=dict(num_classes=150),
    test_cfg=dict(mode='slide', crop_size=crop_size, stride=(341, 341)))
optim_wrapper = dict(
    optimizer=dict(lr=1e-4, weight_decay=0.05),
    constructor='LayerDecayOptimWrapperConstructor',
    paramwise_cfg=dict(layer_decay_rate=0.65))
