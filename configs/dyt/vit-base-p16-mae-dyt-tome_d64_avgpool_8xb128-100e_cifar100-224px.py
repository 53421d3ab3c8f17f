# Earlier name of vit-b-p16-mae-dyt-tome_d64_avgpool_8xb128-100e_cifar100-224px.py.
_base_ = ['./vit-b-p16-mae-dyt-tome_d64_avgpool_8xb128-100e_cifar100-224px.py']
