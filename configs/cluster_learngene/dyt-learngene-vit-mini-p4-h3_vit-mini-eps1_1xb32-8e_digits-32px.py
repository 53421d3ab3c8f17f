# An earlier config, kept so that the commands and configs that name it keep
# working: dyt-learngene-vit-mini-p4-h3_vit-mini-eps0.1_1xb32-8e_digits-32px.py
# on the descendant grown from the learngene clustered at eps = 1 px
# (learngene-vit-mini-p4-h3_vit-mini-eps1_1xb32-10e_digits-32px.py says how
# to build it).
_base_ = ['./dyt-learngene-vit-mini-p4-h3_vit-mini-eps0.1_1xb32-8e_digits-32px.py']
model = dict(backbone=dict(learngene='work_dirs/learngenes/vit-mini-p4_digits-32px_eps1.pth'))
