# An earlier name of this config, kept so that the commands and configs that
# name it keep working; the config itself is
# mask-rcnn_vitdet-b-dyt-moe4_d128_8xb4-12e_coco-1024x1024.py.
_base_ = ['./mask-rcnn_vitdet-b-dyt-moe4_d128_8xb4-12e_coco-1024x1024.py']
