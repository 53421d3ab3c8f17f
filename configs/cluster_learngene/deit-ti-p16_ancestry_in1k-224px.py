# The ancestry of the DeiT-Ti learngene: DeiT-Ti/16 with the ImageNet pipeline
# it was trained with (as deit-b-p16_ancestry_in1k-224px.py); the checkpoint is
# given to the tool, the model is not trained here:
#   python tools/learngene/build_learngene.py \
#       configs/cluster_learngene/deit-ti-p16_ancestry_in1k-224px.py \
#       checkpoints/deit_tiny_patch16_224-a1311bcf.pth \
#       --num-images 1000 --eps 10 --min-hds 1 --centroid select \
#       --out checkpoints/learngene_deit-ti-p16_eps10_in1k.pth
_base_ = [
    './_base_/models/deit-ti-p16.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(backbone=dict(init_cfg=None))
