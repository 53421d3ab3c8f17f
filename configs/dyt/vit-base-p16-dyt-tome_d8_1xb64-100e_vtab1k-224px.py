# Earlier name of vit-b-p16-dyt-tome_d8_1xb64-100e_vtab1k-224px.py.
_base_ = ['./vit-b-p16-dyt-tome_d8_1xb64-100e_vtab1k-224px.py']
