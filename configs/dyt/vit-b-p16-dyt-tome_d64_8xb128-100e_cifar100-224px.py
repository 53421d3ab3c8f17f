# DyT + ToMe on CIFAR-100: the DyT run (MLP dispatch at r = 0.5, d = 64
# adapters) with ToMe merging r = 10 tokens per block (the r whose dense count
# matches DyT's FLOPs, see the AdaptFormer + ToMe config): merging shrinks the
# sequence after each attention, dispatch then gates the merged tokens. ToMe
# has no parameters, so a trained DyT checkpoint also runs it at test time:
#   python tools/test.py configs/dyt/vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py \
#       CKPT --cfg-options model.backbone.token_reduction.type=ToMe \
#       model.backbone.token_reduction.r=10
_base_ = ['./vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py']
model = dict(backbone=dict(token_reduction=dict(type='ToMe', r=10)))
