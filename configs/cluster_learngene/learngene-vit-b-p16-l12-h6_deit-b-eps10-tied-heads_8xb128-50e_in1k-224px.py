# As learngene-vit-b-p16-l12-h6_deit-b-eps10-tied_*, and heads given the
# same head centroid also stay one parameter for the whole training (e.g. the
# 6 heads of a layer with 3 centroids train 3 distinct heads): every weight
# the learngene shares stays shared. No paper table.
_base_ = ['./learngene-vit-b-p16-l12-h6_deit-b-eps10-tied_8xb128-50e_in1k-224px.py']
model = dict(backbone=dict(tie_heads=True))
