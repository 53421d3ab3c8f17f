# Table 2 on CIFAR-100, Heuristic-Learngene row: the 12-layer descendant with
# DeiT-S's last three blocks in its layers 9-11, where DeiT-S has them (layers
# 0-8 start random), as the authors' public code loads them; embeddings, final
# norm and the rest as in the 6-layer variant it changes.
_base_ = ['./learngene-vit-s-p16-l6-h6_deit-s-heuristic_8xb64-500e_cifar100-224px.py']
model = dict(backbone=dict(arch=dict(num_layers=12)))
