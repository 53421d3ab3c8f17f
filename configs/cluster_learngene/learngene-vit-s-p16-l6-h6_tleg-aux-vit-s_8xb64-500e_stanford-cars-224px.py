# TLEG on Stanford Cars at 6 layers, a variant of Table 2's cell
# learngene-vit-s-p16-l12-h6_tleg-aux-vit-s_8xb64-500e_stanford-cars-224px (12
# layers, as the authors train it): the 6-layer descendant of
# learngene-vit-s-p16-l6-h6_deit-s-eps10_8xb64-500e_stanford-cars-224px
# initialised by TLEG's linear expansion, layer l = theta_A + l / 6 theta_B (l
# = 0..5), of the learngene trained in
# tleg-aux-vit-s-p16_levit-384-distill_8xb64-150e_in1k-224px.py. As TLEG's
# public code builds its descendants (github.com/AlphaXia/TLEG at 6e30a5c,
# des_models.py:138: timm's VisionTransformer with class_token=False,
# global_pool='avg'): no class token, and the head reads the mean of the last
# block's patch tokens normalised after the mean (fc_norm; no final norm), a
# norm that starts as the Aux-Net's final norm (utils.py:250); the patch and
# position embeddings are the Aux-Net's too (utils.py:243-245), the classifier
# starts random (utils.py:247-248 loads the head on ImageNet only). Drop path
# 0.1 is main.py:52's default, which no descendant command of TLEG's README.md
# changes. The schedule is Table 2's, the same for every row (TLEG's README.md
# gives none for a downstream set).
_base_ = ['./learngene-vit-s-p16-l6-h6_deit-s-eps10_8xb64-500e_stanford-cars-224px.py']
model = dict(
    backbone=dict(
        init_mode='tleg',
        learngene='checkpoints/tleg-learngene_vit-s-p16_in1k.pth',
        class_token=False,
        out_type='avg_featmap',
        final_norm=False,
        fc_norm=True))
