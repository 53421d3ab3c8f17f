# A Cluster-Learngene descendant of DeiT-Ti/16 (the ancestry's widths: 192
# tokens, heads of 64, FFN 768, patch 16) with DeiT-Ti's classifier and the
# recipe, FFN groups and shared heads as independent copies (how the paper's
# tables were trained; see learngene-vit-b-p16.py). The learngene is built
# once from the ancestry (command in deit-ti-p16_ancestry_in1k-224px.py).
_base_ = ['./learngene-vit-b-p16.py']
model = dict(
    backbone=dict(learngene='checkpoints/learngene_deit-ti-p16_eps10_in1k.pth'),
    head=dict(in_channels=192))
