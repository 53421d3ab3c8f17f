# The ancestry of the ImageNet learngene: DeiT-B/16 with the ImageNet
# pipeline it was trained with. tools/learngene/build_learngene.py averages
# MAD over its val images, normalised by this data_preprocessor; the
# checkpoint is given to the tool, the model is not trained here.
_base_ = [
    './_base_/models/deit-b-p16.py',
    '../_base_/datasets/imagenet_bs64_224.py',
    '../_base_/runtimes/mmpretrain.py',
]
model = dict(backbone=dict(init_cfg=None))
