# Earlier name of vit-b-p14-dinov2-dyt_d64_8xb128-100e_cifar100-224px.py.
_base_ = ['./vit-b-p14-dinov2-dyt_d64_8xb128-100e_cifar100-224px.py']
