# Stanford Dogs (120 breeds; the release's 12,000 training and 8,580 test
# images) at 224 with the DeiT recipe of custom_bs64_deit_224.py. mmpretrain
# has no Stanford Dogs type: the images of the release
# (Images/<synset>-<breed>/*.jpg) are read with list files of
# "<file_list entry> <label - 1>" lines written from its train_list.mat /
# test_list.mat (see the data-root error).
_base_ = ['./custom_bs64_deit_224.py']

num_classes = 120
data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(
    dataset=dict(
        data_root='data/stanford_dogs',
        data_prefix='Images',
        ann_file='meta/train.txt',
        num_classes=num_classes))
val_dataloader = dict(
    dataset=dict(
        data_root='data/stanford_dogs',
        data_prefix='Images',
        ann_file='meta/test.txt',
        num_classes=num_classes))
test_dataloader = val_dataloader
