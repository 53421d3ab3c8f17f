# Table 2 on Oxford Flowers-102, From-Scratch row: a plain ViT of the 12-layer
# DeiT-S descendant's shape (DeiT-S's: 384 wide, 12 layers of 6 heads of 64,
# FFN 1536) with random weights; the rest as in the 6-layer variant it changes.
_base_ = ['./learngene-vit-s-p16-l6-h6_scratch_8xb64-500e_flowers102-224px.py']
model = dict(backbone=dict(arch=dict(num_layers=12)))
