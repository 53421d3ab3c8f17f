# iNaturalist 2019 (1,010 species; 265,213 training and 3,030 validation
# images) at 224 with the DeiT recipe of custom_bs64_deit_224.py, evaluated on
# the validation set as the paper does. mmpretrain has no iNaturalist type: the
# images are read with list files of "train_val2019/<...>.jpg <category_id>"
# lines written from the competition's train2019.json / val2019.json (see the
# data-root error for the layout).
_base_ = ['./custom_bs64_deit_224.py']

num_classes = 1010
data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(
    dataset=dict(data_root='data/inat2019', ann_file='meta/train2019.txt', num_classes=num_classes))
val_dataloader = dict(
    dataset=dict(data_root='data/inat2019', ann_file='meta/val2019.txt', num_classes=num_classes))
test_dataloader = val_dataloader
