# Table 2 on CUB-200-2011, Cluster-Learngene row: the 12-layer descendant of
# the DeiT-S learngene (eps = 10; learngene layers 0-11, omega = 1: 6 heads of
# 64, 384 wide), the depth the authors' downstream command trains
# (../sweeps/cluster-learngene_table2_downstream.py says where it comes from).
# Data set, schedule and learngene: those of the 6-layer variant it changes.
_base_ = ['./learngene-vit-s-p16-l6-h6_deit-s-eps10_8xb64-500e_cub-224px.py']
model = dict(backbone=dict(arch=dict(num_layers=12)))
