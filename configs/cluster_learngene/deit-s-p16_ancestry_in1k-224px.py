# The ancestry of the DeiT-S learngenes: DeiT-S/16 with the ImageNet pipeline
# it was trained with (as deit-b-p16_ancestry_in1k-224px.py); the checkpoint is
# given to the tools, the model is not trained here. The Cluster-Learngene
# learngene (MAD over 1000 val images, eps = 10) and the learngenes of the
# Heuristic- and Auto-Learngene baselines (its last three blocks, blocks 0-5):
#   python tools/learngene/build_learngene.py \
#       configs/cluster_learngene/deit-s-p16_ancestry_in1k-224px.py \
#       checkpoints/deit_small_patch16_224-cd65a155.pth \
#       --num-images 1000 --eps 10 --min-hds 1 --centroid select \
#       --out checkpoints/learngene_deit-s-p16_eps10_in1k.pth
#   python tools/learngene/extract_baseline_learngene.py heuristic \
#       configs/cluster_learngene/deit-s-p16_ancestry_in1k-224px.py \
#       checkpoints/deit_small_patch16_224-cd65a155.pth \
#       --out checkpoints/heuristic-learngene_deit-s-p16_in1k.pth
#   python tools/learngene/extract_baseline_learngene.py auto \
#       configs/cluster_learngene/deit-s-p16_ancestry_in1k-224px.py \
#       checkpoints/deit_small_patch16_224-cd65a155.pth \
#       --out checkpoints/auto-learngene_deit-s-p16_in1k.pth
_base_ = [
    './_base_/models/deit-s-p16.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(backbone=dict(init_cfg=None))
