# DyT on the full data sets (CIFAR-100, SVHN, Food-101, ImageNet-1k) x DyT,
# DyT + MoE (4 experts), AdaptFormer and full fine-tuning, each with the
# options of docs/recipes.md; 8 GPUs x 128 per cell (train_IN21K.sh).
#   python tools/sweep.py configs/sweeps/dyt_full-data.py --dry-run
configs = 'configs/dyt/vit-b-p16-dyt_d64_8xb128-100e_*-224px.py'
axes = dict(
    method={
        'dyt': [],
        'dyt-moe4': ['model.backbone.adapter_cfg.num_experts=4'],
        # The baselines as options on the task configs: a DyTViT without
        # dispatchers (and adapters), whose parameters, trainable set and outputs
        # are AdapterViT's (ViT's); options cannot change the class, which the
        # *adaptformer* / *full-ft* configs build (docs/recipes.md).
        'adaptformer': ['model.backbone.dispatch=None'],
        'full-ft': [
            'model.backbone.dispatch=None', 'model.backbone.adapter_cfg=None',
            'model.backbone.freeze_pretrained=False'
        ],
    })
launcher = dict(type='pytorch', gpus=8)
table = dict(
    rows=['method'],
    columns='config',
    metrics=['accuracy/top1_best_epoch', 'accuracy/top1', 'act_rate', 'gflops'])
