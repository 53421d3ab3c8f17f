# UperNet on a ViT-B/16 adapted by AdaptFormer: the plain ViT UperNet of
# upernet_vit-b_mln.py (weights, input normalisation, neck and heads are its)
# with the backbone an AdapterViT: frozen, an adapter of d = 64 in every block,
# no token dispatch, in DyTEncoderDecoder, whose rate term is 0 without
# dispatch. upernet_dyt-vit-b-d64_mln.py adds DyT's dispatchers to it.
_base_ = ['./upernet_vit-b_mln.py']

model = dict(
    type='DyTEncoderDecoder',
    rate_loss_weight=2.0,  # segmentation losses + 2 * L_rate
    backbone=dict(
        type='AdapterViT',
        adapter_cfg=dict(bottleneck=64, scale=0.1, dropout=0.1, num_experts=1),
        freeze_pretrained=True))

custom_hooks = [dict(type='DispatchRateHook')]
