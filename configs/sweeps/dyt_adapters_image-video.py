# The DyT authors' adapter table (their review answer on AdaMix): DyT, DyT N = 4
# (the MoE-adapter) and DyT-AdaMix (4 experts, its consistency loss) with d = 64
# adapters on three image data sets (CIFAR-100, SVHN, Food-101: the full-data
# recipe, 8 GPUs x 128, train_IN21K.sh) and two video data sets (Kinetics-400 and
# Something-Something v2: 8 GPUs x 16, train_video.sh; docs/video.md), with the
# options of docs/recipes.md; the FLOPs of the answer are those of CIFAR-100 and
# K400 (gflops, with get_flops.py's flops.json in a cell's work dir).
#   python tools/sweep.py configs/sweeps/dyt_adapters_image-video.py --dry-run
_images = ('cifar100', 'svhn', 'food101')
_videos = dict(
    k400='configs/dyt_video/vit-b-p16-dyt_d64_8xb16-12e_k400-8x16x1-224px.py',
    ssv2='configs/dyt_video/vit-b-p16-dyt_d64_8xb16-50e_ssv2-u8-224px.py')
configs = {
    **{
        data: f'configs/dyt/vit-b-p16-dyt_d64_8xb128-100e_{data}-224px.py'
        for data in _images
    },
    **_videos
}
# A video config's ViT is model.backbone.vit (DyTVideoViT), an image config's
# model.backbone: each method gives each data set its options.
_vit = dict(**{data: 'model.backbone'
               for data in _images}, **{data: 'model.backbone.vit'
                                        for data in _videos})
axes = dict(
    method={
        'dyt': [],
        'dyt-moe4': {
            data: [f'{key}.adapter_cfg.num_experts=4']
            for data, key in _vit.items()
        },
        'dyt-adamix4': {
            data: [
                f'{key}.adapter_cfg.num_experts=4', f'{key}.adapter_cfg.mixing=adamix',
                'model.consistency_loss_weight=1.0'
            ]
            for data, key in _vit.items()
        },
    })
launcher = dict(type='pytorch', gpus=8)
table = dict(
    rows=['method'],
    columns='config',
    metrics=['accuracy/top1_best_epoch', 'acc/top1_best_epoch', 'act_rate', 'gflops'])
