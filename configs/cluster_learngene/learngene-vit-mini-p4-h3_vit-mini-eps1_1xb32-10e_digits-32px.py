# An earlier config, kept so that the commands and configs that name it keep
# working: the descendant of learngene-vit-mini-p4-h3_vit-mini-eps0.1_1xb32-10e_digits-32px.py
# grown from a learngene clustered at eps = 1 px, which chains all six heads of
# a layer into one cluster (that config says why eps = 0.1 replaced it). Build
# that learngene with build_learngene.py ... --eps 1 --out
# work_dirs/learngenes/vit-mini-p4_digits-32px_eps1.pth.
_base_ = ['./learngene-vit-mini-p4-h3_vit-mini-eps0.1_1xb32-10e_digits-32px.py']
model = dict(backbone=dict(learngene='work_dirs/learngenes/vit-mini-p4_digits-32px_eps1.pth'))
