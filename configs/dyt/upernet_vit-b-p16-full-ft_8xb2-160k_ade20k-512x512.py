# Baseline: UperNet with every ViT-B weight fine-tuned (no adapters, no
# dispatch): lr 1e-4, weight decay 0.05 and layer-wise lr decay 0.65, the
# recipe of mmseg's MAE / BEiT ViT-B UperNet configs (norms, biases and
# position embeddings without weight decay, as there); the public DyT code
# gives no full fine-tuning recipe.
_base_ = ['./upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py']
model = dict(backbone=dict(dispatch=None, adapter_cfg=None, freeze_pretrained=False))
optim_wrapper = dict(
    optimizer=dict(lr=1e-4, weight_decay=0.05),
    constructor='LayerDecayOptimWrapperConstructor',
    paramwise_cfg=dict(layer_decay_rate=0.65))
