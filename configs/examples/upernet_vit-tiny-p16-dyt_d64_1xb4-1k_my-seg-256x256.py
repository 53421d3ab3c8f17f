# Earlier name of upernet_vit-ti-p16-dyt_d64_1xb4-1k_my-seg-256x256.py.
_base_ = ['./upernet_vit-ti-p16-dyt_d64_1xb4-1k_my-seg-256x256.py']
