# Table 2 on Food-101, TLEG row: the 12-layer descendant, layer l = theta_A + l
# / 12 theta_B (l = 0..11) of the TLEG learngene (TLEG's
# deit_small_patch16_224_L12, des_models.py:134-142); no class token, average
# pooling and the rest as in the 6-layer variant it changes.
_base_ = ['./learngene-vit-s-p16-l6-h6_tleg-aux-vit-s_8xb64-500e_food101-224px.py']
model = dict(backbone=dict(arch=dict(num_layers=12)))
