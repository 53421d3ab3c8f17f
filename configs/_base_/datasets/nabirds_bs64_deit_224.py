# NABirds (555 leaf classes; the release's 23,929 training and 24,633 test
# images by its train_test_split.txt) at 224 with the DeiT recipe of
# custom_bs64_deit_224.py. mmpretrain has no NABirds type: the images
# (images/<class id>/*.jpg) are read with list files of "<images.txt path>
# <label>" lines, the label being the rank of the image's class id among the
# 555 ids that label images (see the data-root error).
_base_ = ['./custom_bs64_deit_224.py']

num_classes = 555
data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(
    dataset=dict(
        data_root='data/nabirds',
        data_prefix='images',
        ann_file='meta/train.txt',
        num_classes=num_classes))
val_dataloader = dict(
    dataset=dict(
        data_root='data/nabirds',
        data_prefix='images',
        ann_file='meta/test.txt',
        num_classes=num_classes))
test_dataloader = val_dataloader
