# SVHN (cropped digits; the 73,257 'train' images, not 'extra', and the
# 26,032 'test' images, as torchvision's SVHN that the public DyT
# main_image.py reads) with the plain augmentation of
# imagenet_bs64_rrc_224.py. mmpretrain has no SVHN class: save torchvision's
# splits as image files in class folders, data/svhn/{train,test}/{0..9}/*.png
# (torchvision already maps label 10 to 0), read by mmpretrain's
# CustomDataset (here the variant whose errors name an unreadable file).
# 64 images per GPU.
_base_ = ['./imagenet_bs64_rrc_224.py']

data_preprocessor = dict(num_classes=10)
train_dataloader = dict(
    dataset=dict(
        _delete_=True,
        type='FileCheckedCustomDataset',
        data_root='data/svhn',
        data_prefix='train',
        pipeline={{_base_.train_pipeline}}))
val_dataloader = dict(
    dataset=dict(
        _delete_=True,
        type='FileCheckedCustomDataset',
        data_root='data/svhn',
        data_prefix='test',
        pipeline={{_base_.test_pipeline}}))
test_dataloader = val_dataloader
