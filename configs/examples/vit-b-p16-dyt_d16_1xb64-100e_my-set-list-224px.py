# DyT (VTAB-1K recipe) on a data set given by list files of "relative/path label" lines:
# data/my_set/meta/{train,val}.txt, paths relative to data/my_set, labels 0..2.
_base_ = [
    '../dyt/_base_/vit-b-p16-dyt_d16_vtab1k-recipe.py',
    '../_base_/datasets/custom_bs64_224.py',
]
data_root = 'data/my_set'
metainfo = dict(classes=('zero', 'one', 'two'))  # label i is classes[i]
train_dataloader = dict(
    dataset=dict(data_root=data_root, ann_file='meta/train.txt', metainfo=metainfo))
val_dataloader = dict(dataset=dict(data_root=data_root, ann_file='meta/val.txt', metainfo=metainfo))
test_dataloader = val_dataloader
model = dict(head=dict(num_classes=3))
