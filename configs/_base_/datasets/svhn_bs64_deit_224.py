# SVHN (cropped digits: the 73,257 'train' images, not 'extra', and the 26,032
# 'test' images) at 224 with the DeiT recipe of custom_bs64_deit_224.py, on the
# class folders svhn_bs64_rrc_224.py reads (data/svhn/{train,test}/{0..9}/*.png,
# written from torchvision's SVHN: see the data-root error).
_base_ = ['./custom_bs64_deit_224.py']

num_classes = 10
data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(
    dataset=dict(data_root='data/svhn', data_prefix='train', num_classes=num_classes))
val_dataloader = dict(
    dataset=dict(data_root='data/svhn', data_prefix='test', num_classes=num_classes))
test_dataloader = val_dataloader
