# The L12-H6 ImageNet descendant with the FFN sharing kept for the whole
# training (Step 5 of the method as the paper's equation describes it): the
# layers of an FFN group (layers 5-8 of the DeiT-B learngene at eps = 10)
# compute with W_t = g_t(W) from one W and the learnable map g, trained with
# the descendant. No paper table was trained this way (they use independent
# copies, see _base_/models/learngene-vit-b-p16.py); compare with
# learngene-vit-b-p16-l12-h6_deit-b-eps10_8xb128-50e_in1k-224px.py. Same
# T-Params, fewer trained parameters (the backbone logs both).
_base_ = ['./learngene-vit-b-p16-l12-h6_deit-b-eps10_8xb128-50e_in1k-224px.py']
model = dict(backbone=dict(ffn_sharing='tied'))
