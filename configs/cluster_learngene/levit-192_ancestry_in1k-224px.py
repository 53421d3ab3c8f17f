# The ancestry of the LeViT-192 learngene (the hybrid ancestry of the
# rebuttal, R4): mmpretrain's LeViT-192 (a convolutional stem of stride 16,
# then 3 stages of 4 attention blocks and MLPs, 192 / 288 / 384 wide, 3 / 5 / 6
# heads of key width 32 on 14 / 7 / 4 grids, a subsample attention between
# stages) with the ImageNet pipeline it is evaluated with; its ImageNet-1k
# checkpoint (mmpretrain's levit-192_3rdparty_in1k, converted from the
# official LeViT-192) is given to the tool, the model is not trained here.
# The heads of every attention block of stages 1-3 are clustered on their MAD
# (on the stage's grid, in pixels) and the MLPs grouped within a stage
# (mmvitdyn/learngene/ancestries/levit.py):
#   python tools/learngene/build_learngene.py \
#       configs/cluster_learngene/levit-192_ancestry_in1k-224px.py \
#       checkpoints/levit-192_3rdparty_in1k_20230117-8217a0f9.pth \
#       --num-images 1000 --eps 10 --min-hds 1 --centroid select \
#       --out checkpoints/learngene_levit-192_eps10_in1k.pth
# The learngenes of the Heuristic- and Auto-Learngene rows of the rebuttal's
# LeViT table (its last three attention blocks, blocks 0-5, counted over the
# stages in order; with its stem and subsample attentions):
#   python tools/learngene/extract_baseline_learngene.py heuristic \
#       configs/cluster_learngene/levit-192_ancestry_in1k-224px.py \
#       checkpoints/levit-192_3rdparty_in1k_20230117-8217a0f9.pth \
#       --out checkpoints/heuristic-learngene_levit-192_in1k.pth
#   python tools/learngene/extract_baseline_learngene.py auto \
#       configs/cluster_learngene/levit-192_ancestry_in1k-224px.py \
#       checkpoints/levit-192_3rdparty_in1k_20230117-8217a0f9.pth \
#       --out checkpoints/auto-learngene_levit-192_in1k.pth
_base_ = [
    'mmpretrain::_base_/models/levit-256-p16.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    '../_base_/runtimes/mmpretrain.py',
]
custom_imports = dict(imports=['mmvitdyn'], allow_failed_imports=False)
model = dict(backbone=dict(arch='192'), head=dict(in_channels=384))
