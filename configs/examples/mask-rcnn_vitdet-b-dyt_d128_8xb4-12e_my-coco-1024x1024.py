# DyT ViTDet Mask R-CNN on a COCO-format data set of your own:
# data/my_coco/images/{train,val}/ and data/my_coco/annotations/{train,val}.json.
_base_ = ['../dyt/mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_coco-1024x1024.py']
data_root = 'data/my_coco/'
metainfo = dict(classes=('circle', 'square', 'triangle'))  # category names of the json files
train_dataloader = dict(
    dataset=dict(
        data_root=data_root,
        metainfo=metainfo,
        ann_file='annotations/train.json',
        data_prefix=dict(img='images/train/')))
val_dataloader = dict(
    dataset=dict(
        data_root=data_root,
        metainfo=metainfo,
        ann_file='annotations/val.json',
        data_prefix=dict(img='images/val/')))
test_dataloader = val_dataloader
val_evaluator = dict(ann_file=data_root + 'annotations/val.json')
test_evaluator = val_evaluator
model = dict(roi_head=dict(bbox_head=dict(num_classes=3), mask_head=dict(num_classes=3)))
