# VTAB-1K as prepared in the PEFT literature (NOAH, VPT, DyT): one folder per
# task, data/vtab-1k/<task>/, holding the images and list files of
# "relative/path label" lines. Models train on train800val200.txt (1,000
# images) and are evaluated on test.txt. The transforms, batch and ImageNet
# statistics are those of custom_bs64_224.py (images resized to 224x224, PIL
# bicubic, no augmentation, as the public DyT main_vtab.py does); a data set
# of your own in the same recipe starts from that file, not from this one,
# whose list files it would otherwise inherit.
#
# A task config overrides the data root. The dataloaders below are built when
# this file is read, so changing ``vtab_task`` alone does not reach them; a
# task config sets the root and the class count (which the data sets check
# the labels against) in each:
#
#   _base_ = [..., '../_base_/datasets/vtab1k_bs64_224.py']
#   vtab_task = 'dtd'
#   data_root = f'data/vtab-1k/{vtab_task}'
#   num_classes = 47
#   train_dataloader = dict(dataset=dict(data_root=data_root, num_classes=num_classes))
#   val_dataloader = dict(dataset=dict(data_root=data_root, num_classes=num_classes))
#   test_dataloader = val_dataloader
#   model = dict(head=dict(num_classes=num_classes))
#
# Classes per task: cifar 100, caltech101 102, dtd 47, oxford_flowers102 102,
# oxford_iiit_pet 37, svhn 10, sun397 397, patch_camelyon 2, eurosat 10,
# resisc45 45, diabetic_retinopathy 5, clevr_count 8, clevr_dist 6, dmlab 6,
# kitti 4, dsprites_loc 16, dsprites_ori 16, smallnorb_azi 18,
# smallnorb_ele 9.
_base_ = ['./custom_bs64_224.py']

vtab_task = 'cifar'
data_root = f'data/vtab-1k/{vtab_task}'
num_classes = 100  # the data set's labels are checked against it
train_dataloader = dict(
    dataset=dict(data_root=data_root, ann_file='train800val200.txt', num_classes=num_classes))
val_dataloader = dict(
    dataset=dict(data_root=data_root, ann_file='test.txt', num_classes=num_classes))
test_dataloader = val_dataloader
