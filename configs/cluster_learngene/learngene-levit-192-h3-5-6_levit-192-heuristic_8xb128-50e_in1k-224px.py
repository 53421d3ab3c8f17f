# Heuristic-Learngene row of the rebuttal's LeViT table (R4) on ImageNet-1k: the
# LeViT-192-shaped descendant of
# learngene-levit-192-h3-5-6_levit-192-eps10_8xb128-50e_in1k-224px.py (its
# heads, blocks and recipe) initialised from LeViT-192's last three attention
# blocks with their MLPs (blocks 9-11 of its 12, counted over the stages in
# order: the last three of stage 3) in the same blocks (the others start
# random), as the Cluster-Learngene code loads DeiT-S's last three blocks at
# their own indices for its Heuristic-Learngene
# (github.com/BruceQFWang/NeurIPS24-Cluster-Learngene at cc00657,
# models/__init__.py:245-247 and 266-271). The stem and the two subsample
# attentions with their MLPs are LeViT-192's too, as the Cluster-Learngene
# descendant inherits them and as that code loads everything of the ancestry but
# the dropped blocks and the classifier; the classifier starts random. The
# LeViT-192 block layout is ours: the sources have no LeViT baseline (the public
# code, none; the rebuttal's table did not survive in the seed). The learngene:
# see levit-192_ancestry_in1k-224px.py.
_base_ = ['./learngene-levit-192-h3-5-6_levit-192-eps10_8xb128-50e_in1k-224px.py']
model = dict(
    backbone=dict(
        init_mode='heuristic', learngene='checkpoints/heuristic-learngene_levit-192_in1k.pth'))
