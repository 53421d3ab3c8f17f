# Heuristic-Learngene on EuroSAT (the review answer R4 (2)) at 6 layers, a
# variant of Table 2's cell
# learngene-vit-s-p16-l12-h6_deit-s-heuristic_8xb64-500e_eurosat-224px (12
# layers, as the authors train it): the 6-layer descendant of
# learngene-vit-s-p16-l6-h6_deit-s-eps10_8xb64-500e_eurosat-224px initialised
# from DeiT-S's last three blocks in its layers 3-5, as on the other data sets
# (e.g. learngene-vit-s-p16-l6-h6_deit-s-heuristic_8xb64-500e_cub-224px). The
# learngene: see deit-s-p16_ancestry_in1k-224px.py.
_base_ = ['./learngene-vit-s-p16-l6-h6_deit-s-eps10_8xb64-500e_eurosat-224px.py']
model = dict(
    backbone=dict(
        init_mode='heuristic', learngene='checkpoints/heuristic-learngene_deit-s-p16_in1k.pth'))
