# Auto-Learngene row of the rebuttal's LeViT table (R4) on ImageNet-1k: the
# LeViT-192-shaped descendant of
# learngene-levit-192-h3-5-6_levit-192-eps10_8xb128-50e_in1k-224px.py (its
# heads, blocks and recipe) initialised from LeViT-192's attention blocks 0-5
# with their MLPs (of its 12, counted over the stages in order: stage 1's four
# and stage 2's first two) in the same blocks (the others start random), as the
# Cluster-Learngene code loads DeiT-S's blocks 0-5 at their own indices for its
# Auto-Learngene (github.com/BruceQFWang/NeurIPS24-Cluster-Learngene at cc00657,
# models/__init__.py:241-243 and 266-271). The stem and the two subsample
# attentions with their MLPs are LeViT-192's too, as the Cluster-Learngene
# descendant inherits them and as that code loads everything of the ancestry but
# the dropped blocks and the classifier; the classifier starts random. The
# LeViT-192 block layout is ours: the sources have no LeViT baseline (the public
# code, none; the rebuttal's table did not survive in the seed). The learngene:
# see levit-192_ancestry_in1k-224px.py.
_base_ = ['./learngene-levit-192-h3-5-6_levit-192-eps10_8xb128-50e_in1k-224px.py']
model = dict(
    backbone=dict(init_mode='auto', learngene='checkpoints/auto-learngene_levit-192_in1k.pth'))
