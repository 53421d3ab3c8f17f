# Earlier name of dyt-vit-b-p16.py.
_base_ = ['./dyt-vit-b-p16.py']
