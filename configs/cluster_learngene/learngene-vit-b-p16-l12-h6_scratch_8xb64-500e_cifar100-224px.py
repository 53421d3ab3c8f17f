# From-Scratch baseline on CIFAR-100: the 12-layer, 6-head descendant with
# random weights and the same 500-epoch schedule.
_base_ = ['./learngene-vit-b-p16-l12-h6_deit-b-eps10_8xb64-500e_cifar100-224px.py']
model = dict(backbone=dict(inherit=False))
