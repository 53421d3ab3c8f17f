# From-Scratch comparison of the digits demo: the same descendant (6 layers,
# 3 heads of 32, the learngene's FFN groups and expansion) with random
# weights, trained for the same 10 epochs.
_base_ = ['./learngene-vit-mini-p4-h3_vit-mini-eps1_1xb32-10e_digits-32px.py']
model = dict(backbone=dict(inherit=False))
