# Heuristic-Learngene on iNaturalist 2019 at 6 layers, a variant of Table 2's
# cell learngene-vit-s-p16-l12-h6_deit-s-heuristic_8xb64-500e_inat2019-224px
# (12 layers, as the authors train it): the 6-layer descendant of
# learngene-vit-s-p16-l6-h6_deit-s-eps10_8xb64-500e_inat2019-224px initialised
# from DeiT-S's last three blocks in its layers 3-5 (layers 0-2 start random);
# its embeddings and final norm are DeiT-S's too (as the paper's comparison
# loads them), its classifier starts random. The learngene: see
# deit-s-p16_ancestry_in1k-224px.py.
_base_ = ['./learngene-vit-s-p16-l6-h6_deit-s-eps10_8xb64-500e_inat2019-224px.py']
model = dict(
    backbone=dict(
        init_mode='heuristic', learngene='checkpoints/heuristic-learngene_deit-s-p16_in1k.pth'))
