# ADE20K (ADEChallengeData2016, 150 classes) at 512x512 crops: mmseg's own
# recipe, unchanged (RandomResize to 2048x512 x 0.5..2.0, RandomCrop 512,
# flip, photometric distortion; test Resize 2048x512). It defines
# ``crop_size = (512, 512)`` for model configs' data_preprocessor. The data
# set is ADE20KDataset, whose errors name an unreadable image or label map.
_base_ = ['mmseg::_base_/datasets/ade20k.py']
train_dataloader = dict(dataset=dict(type='FileCheckedADE20KDataset'))
val_dataloader = dict(dataset=dict(type='FileCheckedADE20KDataset'))
test_dataloader = val_dataloader
