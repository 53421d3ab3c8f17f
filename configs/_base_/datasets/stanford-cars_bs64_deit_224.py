# Stanford Cars (196 classes) at 224 with the DeiT recipe's augmentation and
# ImageNet mean/std (the pipeline of imagenet_bs64_224.py) on mmpretrain's
# StanfordCars: 8,144 training and 8,041 test images. 64 images per GPU.
_base_ = ['./imagenet_bs64_224.py']

data_preprocessor = dict(num_classes=196)
train_dataloader = dict(
    dataset=dict(type='StanfordCars', data_root='data/stanford_cars', split='train'))
val_dataloader = dict(
    dataset=dict(type='StanfordCars', data_root='data/stanford_cars', split='test'))
test_dataloader = val_dataloader
