# An earlier name of this config, kept so that the commands and configs that
# name it keep working; the config itself is
# upernet_vit-b-p16-dyt_d64_8xb2-80k_pascal-context-59-480x480.py.
_base_ = ['./upernet_vit-b-p16-dyt_d64_8xb2-80k_pascal-context-59-480x480.py']
