# Auto-Learngene on Stanford Cars at 6 layers, a variant of Table 2's cell
# learngene-vit-s-p16-l12-h6_deit-s-auto_8xb64-500e_stanford-cars-224px (12
# layers, as the authors train it): the 6-layer descendant of
# learngene-vit-s-p16-l6-h6_deit-s-eps10_8xb64-500e_stanford-cars-224px
# initialised from DeiT-S's blocks 0-5 in its six layers; its embeddings and
# final norm are DeiT-S's too (as the paper's comparison loads them), its
# classifier starts random. The learngene: see
# deit-s-p16_ancestry_in1k-224px.py.
_base_ = ['./learngene-vit-s-p16-l6-h6_deit-s-eps10_8xb64-500e_stanford-cars-224px.py']
model = dict(
    backbone=dict(init_mode='auto', learngene='checkpoints/auto-learngene_deit-s-p16_in1k.pth'))
