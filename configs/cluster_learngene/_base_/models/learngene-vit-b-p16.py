# A Cluster-Learngene descendant of DeiT-B/16 (the ancestry's widths: 768
# tokens, heads of 64, FFN 3072, patch 16) with DeiT-B's classifier and
# recipe; task configs choose the depth and heads in backbone.arch (without
# it a descendant keeps the ancestry's 12 layers and 12 heads).
# ffn_sharing='independent' is how the paper's tables were trained (the public
# code): the layers of an FFN group start as copies of the group's FFN and
# train independently, as do heads sharing a centroid. This reproduces Table 1
# (ImageNet-1k descendants), Table 2 (downstream data sets) and the ADE20K
# segmentation of the rebuttal. The *_deit-b-eps10-tied* configs keep the
# sharing for the whole training instead (no paper table).
# The learngene is built once from the ancestry and serves every descendant:
#   python tools/learngene/build_learngene.py \
#       configs/cluster_learngene/deit-b-p16_ancestry_in1k-224px.py \
#       checkpoints/deit_base_patch16_224-b5f2ef4d.pth \
#       --num-images 1000 --eps 10 --min-hds 1 --centroid select \
#       --out checkpoints/learngene_deit-b-p16_eps10_in1k.pth
_base_ = ['./deit-b-p16.py']
model = dict(
    backbone=dict(
        _delete_=True,
        type='LearngeneViT',
        learngene='checkpoints/learngene_deit-b-p16_eps10_in1k.pth',
        ffn_sharing='independent',
        img_size=224,
        drop_path_rate=0.1,
        out_type='cls_token'))
