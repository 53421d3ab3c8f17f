# The demo's DyT top-K: the digits DyT run with top-K dispatchers, each keeping
# exactly round(0.5 * 64) = 32 patch tokens per image; no rate loss.
_base_ = ['./vit-mini-p4-dyt_1xb32-8e_digits-32px.py']
model = dict(rate_loss_weight=0.0, backbone=dict(dispatcher_cfg=dict(mode='topk')))
