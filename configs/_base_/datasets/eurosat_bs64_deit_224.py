# EuroSAT (RGB, 10 land-cover classes, 27,000 64x64 images) at 224 with the
# DeiT recipe of custom_bs64_deit_224.py. The release has no split: the
# 60 / 20 / 20 split of Neumann et al. (2019, the one torchgeo ships as
# eurosat-{train,val,test}.txt) gives 21,600 training (train + val) and 5,400
# test images. mmpretrain has no EuroSAT type: the images
# (EuroSAT_RGB/<class>/*.jpg) are read with list files of "<class>/<file>
# <label>" lines, the label being the class folder's rank in sorted order (see
# the data-root error).
_base_ = ['./custom_bs64_deit_224.py']

num_classes = 10
data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(
    dataset=dict(
        data_root='data/eurosat',
        data_prefix='EuroSAT_RGB',
        ann_file='meta/train.txt',
        num_classes=num_classes))
val_dataloader = dict(
    dataset=dict(
        data_root='data/eurosat',
        data_prefix='EuroSAT_RGB',
        ann_file='meta/test.txt',
        num_classes=num_classes))
test_dataloader = val_dataloader
