# UperNet on a ViT-B/16 adapted by DyT, as the paper's segmentation setting:
# the plain ViT UperNet of upernet_vit-b_mln.py (weights, input normalisation,
# neck and heads are its) with the backbone a DyTViT: frozen, MLP token
# dispatch at target rate 0.5, adapter d = 64.
_base_ = ['./upernet_vit-b_mln.py']

model = dict(
    type='DyTEncoderDecoder',
    rate_loss_weight=2.0,  # segmentation losses + 2 * L_rate
    backbone=dict(
        type='DyTViT',
        dispatch='mlp',
        target_rate=0.5,
        adapter_cfg=dict(bottleneck=64, scale=0.1, dropout=0.1, num_experts=1),
        freeze_pretrained=True))

custom_hooks = [dict(type='DispatchRateHook')]
