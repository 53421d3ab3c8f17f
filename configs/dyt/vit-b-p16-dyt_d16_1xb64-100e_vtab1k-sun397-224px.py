_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
vtab_task = 'sun397'
data_root = f'data/vtab-1k/{vtab_task}'
num_classes = 397
train_dataloader = dict(dataset=dict(data_root=data_root, num_classes=num_classes))
val_dataloader = dict(dataset=dict(data_root=data_root, num_classes=num_classes))
test_dataloader = val_dataloader
model = dict(head=dict(num_classes=num_classes))
