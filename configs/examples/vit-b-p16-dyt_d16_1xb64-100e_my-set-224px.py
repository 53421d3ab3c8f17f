# DyT (VTAB-1K recipe) on an ImageFolder data set: data/my_set/{train,val}/<class>/<image>.
_base_ = [
    '../dyt/_base_/vit-b-p16-dyt_d16_vtab1k-recipe.py',
    '../_base_/datasets/custom_bs64_224.py',
]
train_dataloader = dict(dataset=dict(data_root='data/my_set/train'))
val_dataloader = dict(dataset=dict(data_root='data/my_set/val'))
test_dataloader = val_dataloader
model = dict(head=dict(num_classes=3))  # the number of class folders
