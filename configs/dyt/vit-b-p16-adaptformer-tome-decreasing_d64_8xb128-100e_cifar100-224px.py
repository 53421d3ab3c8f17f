# AdaptFormer + ToMe on CIFAR-100 with ToMe's decreasing schedule: the
# AdaptFormer + ToMe run with r = (R, -1), which the public ToMe code's
# parse_r spreads as a line from 2R merges in the first block down to 0 in
# the last (its docstring: (r, -1) is the paper's "decreasing schedule"; the
# ToMe paper's default is the constant r of the other ToMe configs).
# Neither the DyT paper nor ToMe's gives a decreasing-schedule setting for
# ViT-B/16 on CIFAR-100, so R is chosen by matched FLOPs, as the constant
# run's r = 10: R = 8 asks 16, 14, 13, 11, 10, 8, 7, 5, 4, 2, 1, 0 merges
# (parse_r's truncation), 197 -> 106 tokens, 11.92 GFLOPs per image (the
# metafile's count; r = 10 constant: 12.18; R = 7: 12.71,
# above DyT's 12.5 at r = 0.5).
_base_ = ['./vit-b-p16-adaptformer-tome_d64_8xb128-100e_cifar100-224px.py']
model = dict(backbone=dict(token_reduction=dict(type='ToMe', r=(8, -1))))
