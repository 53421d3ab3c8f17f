# RESISC45 (NWPU-RESISC45: 45 scene classes, 31,500 256x256 images) at 224 with
# the DeiT recipe of custom_bs64_deit_224.py. The release has no split: the
# 60 / 20 / 20 split of Neumann et al. (2019, the one torchgeo ships as
# resisc45-{train,val,test}.txt) gives 25,200 training (train + val) and 6,300
# test images. mmpretrain has no RESISC45 type: the images
# (NWPU-RESISC45/<class>/*.jpg) are read with list files of "<class>/<file>
# <label>" lines, the label being the class folder's rank in sorted order (see
# the data-root error).
_base_ = ['./custom_bs64_deit_224.py']

num_classes = 45
data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(
    dataset=dict(
        data_root='data/resisc45',
        data_prefix='NWPU-RESISC45',
        ann_file='meta/train.txt',
        num_classes=num_classes))
val_dataloader = dict(
    dataset=dict(
        data_root='data/resisc45',
        data_prefix='NWPU-RESISC45',
        ann_file='meta/test.txt',
        num_classes=num_classes))
test_dataloader = val_dataloader
