# Earlier name of vit-b-p16-dyt-topk_d64_8xb128-100e_cifar100-224px.py.
_base_ = ['./vit-b-p16-dyt-topk_d64_8xb128-100e_cifar100-224px.py']
