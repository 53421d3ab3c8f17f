# DyT + ToMe on CIFAR-100 with ToMe's decreasing schedule: the DyT + ToMe run
# with r = (8, -1) (16 merges in the first block down to 0 in the last, by
# the public ToMe code's parse_r; R = 8 matches the FLOPs of the constant
# r = 10, see the AdaptFormer + ToMe decreasing config). Dispatch gates the
# merged tokens. A trained DyT checkpoint also runs it at test time:
#   --cfg-options "model.backbone.token_reduction.type=ToMe" \
#       "model.backbone.token_reduction.r=(8,-1)"
_base_ = ['./vit-b-p16-dyt-tome_d64_8xb128-100e_cifar100-224px.py']
model = dict(backbone=dict(token_reduction=dict(type='ToMe', r=(8, -1))))
