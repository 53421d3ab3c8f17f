# TLEG on NABirds (the review answer R4 (2)) at 6 layers, a variant of Table
# 2's cell learngene-vit-s-p16-l12-h6_tleg-aux-vit-s_8xb64-500e_nabirds-224px
# (12 layers, as the authors train it): the 6-layer descendant of
# learngene-vit-s-p16-l6-h6_deit-s-eps10_8xb64-500e_nabirds-224px initialised
# by TLEG's linear expansion, layer l = theta_A + l / 6 theta_B (l = 0..5), of
# the learngene trained in tleg-aux-vit-s-p16_8xb128-100e_in1k-224px.py, as on
# the other data sets.
_base_ = ['./learngene-vit-s-p16-l6-h6_deit-s-eps10_8xb64-500e_nabirds-224px.py']
model = dict(
    backbone=dict(init_mode='tleg', learngene='checkpoints/tleg-learngene_vit-s-p16_in1k.pth'))
