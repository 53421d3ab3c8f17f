# A Cluster-Learngene descendant of DeiT-S/16 (the ancestry's widths: 384
# tokens, heads of 64, FFN 1536, patch 16) with DeiT-S's classifier and the
# recipe, FFN groups and shared heads as independent copies (how the paper's
# tables were trained; see learngene-vit-b-p16.py). The learngene is built
# once from the ancestry (commands in deit-s-p16_ancestry_in1k-224px.py).
_base_ = ['./learngene-vit-b-p16.py']
model = dict(
    backbone=dict(learngene='checkpoints/learngene_deit-s-p16_eps10_in1k.pth'),
    head=dict(in_channels=384))
