# DyT + ToMe on the MAE-pretrained ViT-B/16 for CIFAR-100, with MAE's
# averaging head: the MAE DyT run with out_type='avg_featmap' (MAE's
# fine-tuning pools the patch tokens, global_pool) and ToMe, whose pooling
# weights each merged token by the patches it holds (sum(size * x) /
# sum(size), as ToMe's MAE patch does).
# r = 16 as ToMe's README reports for ViT-B/16 MAE. No proportional attention
# (prop_attn=False): ToMe's README sets it only for the MAE models it trained
# with ToMe and advises against it for off-the-shelf ones, and its MAE patch
# (tome/patch/mae.py) defaults to False. The ViT here is MAE's pretrained
# checkpoint, frozen: its attention never trains with ToMe (only adapters,
# dispatchers and head do). At 224 the last block meets the cap (20 patch
# tokens merge 10, not 16): 197 -> 11 tokens, as in ToMe's code. Not a setting
# of the DyT paper, which runs no MAE + ToMe model. Differs from MAE's head in
# one point: MAE drops the encoder's final norm and normalises the pooled
# feature (a new fc_norm); here the frozen checkpoint's final norm is applied
# to every token before the pooling.
_base_ = ['./vit-b-p16-mae-dyt_d64_8xb128-100e_cifar100-224px.py']
model = dict(
    backbone=dict(out_type='avg_featmap', token_reduction=dict(type='ToMe', r=16, prop_attn=False)))
