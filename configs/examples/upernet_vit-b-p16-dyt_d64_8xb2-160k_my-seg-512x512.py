# DyT UperNet on a semantic segmentation data set in mmseg's BaseSegDataset layout:
# data/my_seg/img_dir/{train,val}/<name>.jpg and data/my_seg/ann_dir/{train,val}/<name>.png,
# label maps of one 8-bit channel: 0 unlabelled, 1..5 the classes (reduce_zero_label maps
# them to 0..4 and 0 to 255, which the loss ignores).
_base_ = ['../dyt/upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py']
data_root = 'data/my_seg'
metainfo = dict(
    classes=('building', 'sky', 'tree', 'road', 'grass'),
    palette=[[180, 120, 120], [6, 230, 230], [4, 200, 3], [140, 140, 140], [4, 250, 7]])
dataset = dict(
    type='FileCheckedBaseSegDataset',
    data_root=data_root,
    metainfo=metainfo,
    img_suffix='.jpg',
    seg_map_suffix='.png',
    reduce_zero_label=True)
train_dataloader = dict(
    dataset=dict(
        **dataset, data_prefix=dict(img_path='img_dir/train', seg_map_path='ann_dir/train')))
val_dataloader = dict(
    dataset=dict(**dataset, data_prefix=dict(img_path='img_dir/val', seg_map_path='ann_dir/val')))
test_dataloader = val_dataloader
model = dict(decode_head=dict(num_classes=5), auxiliary_head=dict(num_classes=5))
