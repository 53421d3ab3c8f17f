# From-Scratch baseline: the same descendant (12 layers, 6 heads of 64, FFN
# groups and expansion as built from the learngene) with random weights,
# trained 100 epochs instead of 50.
_base_ = ['./learngene-vit-b-p16-l12-h6_deit-b-eps10_8xb128-50e_in1k-224px.py']
model = dict(backbone=dict(inherit=False))
train_cfg = dict(max_epochs=100)
