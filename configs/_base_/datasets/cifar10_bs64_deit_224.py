# CIFAR-10 at 224 with the DeiT recipe's augmentation and ImageNet mean/std,
# as cifar100_bs64_deit_224.py (mmpretrain's CIFAR10: 50,000 training and
# 10,000 test images).
_base_ = ['./cifar100_bs64_deit_224.py']

data_preprocessor = dict(num_classes=10)
train_dataloader = dict(dataset=dict(type='CIFAR10', data_root='data/cifar10'))
val_dataloader = dict(dataset=dict(type='CIFAR10', data_root='data/cifar10'))
test_dataloader = val_dataloader
