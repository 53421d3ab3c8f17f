# As the 12-layer CIFAR-100 descendant, with 6 layers (learngene layers 0-5).
_base_ = ['./learngene-vit-b-p16-l12-h6_deit-b-eps10_8xb64-500e_cifar100-224px.py']
model = dict(backbone=dict(arch=dict(num_layers=6)))
