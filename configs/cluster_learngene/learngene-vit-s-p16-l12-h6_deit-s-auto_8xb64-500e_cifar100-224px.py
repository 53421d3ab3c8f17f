# Table 2 on CIFAR-100, Auto-Learngene row: the 12-layer descendant with
# DeiT-S's blocks 0-5 in its layers 0-5 (layers 6-11 start random), as the
# authors' public code loads them; embeddings, final norm and the rest as in
# the 6-layer variant it changes.
_base_ = ['./learngene-vit-s-p16-l6-h6_deit-s-auto_8xb64-500e_cifar100-224px.py']
model = dict(backbone=dict(arch=dict(num_layers=12)))
