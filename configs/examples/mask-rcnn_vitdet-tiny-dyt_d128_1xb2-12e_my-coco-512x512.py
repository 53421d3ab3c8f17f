# Earlier name of mask-rcnn_vitdet-ti-dyt_d128_1xb2-12e_my-coco-512x512.py.
_base_ = ['./mask-rcnn_vitdet-ti-dyt_d128_1xb2-12e_my-coco-512x512.py']
