# AdaptFormer + ToMe on CIFAR-100: the DyT CIFAR-100 run's frozen ViT-B/16 and
# d = 64, s = 0.1 adapters, no token dispatch (so the classifier trains with
# the plain cross-entropy), and token merging in every block.
# r = 10 merged per block: 197 -> 77 tokens, 12.18 GFLOPs per image by
# tools/analysis_tools/get_flops.py, matched to DyT at r = 0.5 (12.5 GFLOPs in
# the DyT paper). The DyT paper's own ToMe table did not survive in our sources
# (docs of the review, /work/shared/seeds), so r is chosen by matched FLOPs.
_base_ = ['./vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py']
model = dict(
    backbone=dict(
        _delete_=True,
        type='AdapterViT',
        arch='base',
        img_size=224,
        patch_size=16,
        drop_path_rate=0.0,
        out_type='cls_token',
        adapter_cfg=dict(bottleneck=64, scale=0.1, dropout=0.1, num_experts=1),
        freeze_pretrained=True,
        token_reduction=dict(type='ToMe', r=10),
        init_cfg=dict(
            type='Pretrained', checkpoint='checkpoints/vit-base-p16_in21k.pth', prefix=None)))
