# The ancestry of the ImageNet learngene: DeiT-B/16 with the ImageNet
# pipeline it was trained with. tools/learngene/build_learngene.py averages
# MAD over its val images, normalised by this data_preprocessor; the
# checkpoint is given to the tool, the model is not trained here:
#   python tools/learngene/build_learngene.py \
#       configs/cluster_learngene/deit-b-p16_ancestry_in1k-224px.py \
#       checkpoints/deit_base_patch16_224-b5f2ef4d.pth \
#       --num-images 1000 --eps 10 --min-hds 1 --centroid select \
#       --out checkpoints/learngene_deit-b-p16_eps10_in1k.pth
_base_ = [
    './_base_/models/deit-b-p16.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(backbone=dict(init_cfg=None))
