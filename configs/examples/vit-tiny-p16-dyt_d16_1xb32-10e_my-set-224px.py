# Earlier name of vit-ti-p16-dyt_d16_1xb32-10e_my-set-224px.py.
_base_ = ['./vit-ti-p16-dyt_d16_1xb32-10e_my-set-224px.py']
