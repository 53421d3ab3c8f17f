# Earlier name of upernet_vit-mini-p16-dyt_pyramid_1xb4-400i_ade-shapes-128px.py.
_base_ = ['./upernet_vit-mini-p16-dyt_pyramid_1xb4-400i_ade-shapes-128px.py']
