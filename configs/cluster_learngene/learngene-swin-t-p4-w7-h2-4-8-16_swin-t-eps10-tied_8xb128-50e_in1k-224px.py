# The Swin-T descendant with the FFN sharing kept for the whole training, as
# learngene-vit-b-p16-l12-h6_deit-b-eps10-tied_8xb128-50e_in1k-224px.py does for
# ViT: the blocks of a stage's FFN group compute with W_t = g_t(W) from one W
# and the learnable map g, trained with the descendant. No paper table was
# trained this way (the Swin rows use independent copies); compare with
# learngene-swin-t-p4-w7-h2-4-8-16_swin-t-eps10_8xb128-50e_in1k-224px.py. Same
# T-Params, fewer trained parameters (the backbone logs both).
_base_ = ['./learngene-swin-t-p4-w7-h2-4-8-16_swin-t-eps10_8xb128-50e_in1k-224px.py']
model = dict(backbone=dict(ffn_sharing='tied'))
