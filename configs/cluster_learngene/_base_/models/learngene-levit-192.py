# A Cluster-Learngene descendant of LeViT-192 (the ancestry's widths 192 / 288
# / 384, key width 32, 14 / 7 / 4 grids, convolutional stem and subsample
# attentions, inherited whole), with LeViT-192's classifier and recipe
# (levit-192.py); task configs choose the heads and blocks per stage in
# backbone.arch (without it the descendant has LeViT-192's 3 / 5 / 6 heads and
# 4 / 4 / 4 blocks). A stage's FFN groups are inherited as independent copies,
# as the paper's tables were trained. The seeds give no more of the LeViT runs
# than the epochs, so the rest follows the ViT descendants' recipe (the task
# configs' schedules).
# The learngene is built once from the ancestry and serves every descendant
# (command in ../../levit-192_ancestry_in1k-224px.py).
_base_ = ['./levit-192.py']
model = dict(
    backbone=dict(
        _delete_=True,
        type='LearngeneLeViT',
        learngene='checkpoints/learngene_levit-192_eps10_in1k.pth',
        img_size=224,
        drop_path_rate=0.,
        out_indices=(2, )))
