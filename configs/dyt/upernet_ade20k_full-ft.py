# An earlier name of this config, kept so that the commands and configs that
# name it keep working; the config itself is
# upernet_vit-b-p16-full-ft_8xb2-160k_ade20k-512x512.py.
_base_ = ['./upernet_vit-b-p16-full-ft_8xb2-160k_ade20k-512x512.py']
