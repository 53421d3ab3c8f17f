# Earlier name of vit-b-p16-dyt_d64_8xb128-100e_svhn-224px.py.
_base_ = ['./vit-b-p16-dyt_d64_8xb128-100e_svhn-224px.py']
