# The ancestry of the Swin-B learngene: mmpretrain's Swin-B (128 wide, depths
# 2 / 2 / 18 / 2, 4 / 8 / 16 / 32 heads of 32, windows of 7) with the ImageNet
# pipeline it was trained with; its ImageNet-1k checkpoint (mmpretrain's) is
# given to the tool, the model is not trained here (as for Swin-T, see
# swin-t-p4-w7_ancestry_in1k-224px.py):
#   python tools/learngene/build_learngene.py \
#       configs/cluster_learngene/swin-b-p4-w7_ancestry_in1k-224px.py \
#       checkpoints/swin-base_in1k.pth \
#       --num-images 1000 --eps 10 --min-hds 1 --centroid select \
#       --out checkpoints/learngene_swin-b-p4-w7_eps10_in1k.pth
_base_ = [
    'mmpretrain::_base_/models/swin_transformer/base_224.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    '../_base_/runtimes/mmpretrain.py',
]
custom_imports = dict(imports=['mmvitdyn'], allow_failed_imports=False)
