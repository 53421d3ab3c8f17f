# Earlier name of vit-b-p16-dyt_d16_1xb64-100e_vtab1k-smallnorb-azi-224px.py.
_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_vtab1k-smallnorb-azi-224px.py']
