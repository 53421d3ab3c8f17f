_base_ = ['./vit-base-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
vtab_task = 'svhn'
data_root = f'data/vtab-1k/{vtab_task}'
train_dataloader = dict(dataset=dict(data_root=data_root))
val_dataloader = dict(dataset=dict(data_root=data_root))
test_dataloader = val_dataloader
model = dict(head=dict(num_classes=10))
