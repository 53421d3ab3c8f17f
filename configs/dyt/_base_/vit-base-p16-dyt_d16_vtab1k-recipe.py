# Earlier name of vit-b-p16-dyt_d16_vtab1k-recipe.py.
_base_ = ['./vit-b-p16-dyt_d16_vtab1k-recipe.py']
