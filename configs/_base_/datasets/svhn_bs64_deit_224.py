# SVHN (cropped digits: the 73,257 'train' images, not 'extra', and the 26,032
# 'test' images) at 224 with the DeiT recipe's augmentation and ImageNet
# mean/std (the pipeline of imagenet_bs64_224.py), on the class folders
# svhn_bs64_rrc_224.py reads (data/svhn/{train,test}/{0..9}/*.png, written
# from torchvision's SVHN: see the data-root error), by the CustomDataset
# whose errors name unreadable files. 64 images per GPU.
_base_ = ['./imagenet_bs64_224.py']

num_classes = 10
data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(
    dataset=dict(
        _delete_=True,
        type='FileCheckedCustomDataset',
        data_root='data/svhn',
        data_prefix='train',
        num_classes=num_classes,
        pipeline={{_base_.train_pipeline}}))
val_dataloader = dict(
    dataset=dict(
        _delete_=True,
        type='FileCheckedCustomDataset',
        data_root='data/svhn',
        data_prefix='test',
        num_classes=num_classes,
        pipeline={{_base_.test_pipeline}}))
test_dataloader = val_dataloader
