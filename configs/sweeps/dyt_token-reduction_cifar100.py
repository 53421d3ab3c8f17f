# DyT against token pruning and merging on CIFAR-100 (d = 64 adapters, the
# full-data recipe): DyT, its top-K and soft top-K dispatch, DyT + ToMe, and
# AdaptFormer + ToMe / EViT (with and without keep-rate warm-up) / DynamicViT;
# each config's header says how its rate or r was matched to DyT's FLOPs.
#   python tools/sweep.py configs/sweeps/dyt_token-reduction_cifar100.py --dry-run
configs = {
    'dyt':
    'configs/dyt/vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py',
    'dyt-topk':
    'configs/dyt/vit-b-p16-dyt-topk_d64_8xb128-100e_cifar100-224px.py',
    'dyt-soft-topk':
    'configs/dyt/vit-b-p16-dyt-soft-topk_d64_8xb128-100e_cifar100-224px.py',
    'dyt-tome':
    'configs/dyt/vit-b-p16-dyt-tome_d64_8xb128-100e_cifar100-224px.py',
    'adaptformer-tome':
    'configs/dyt/vit-b-p16-adaptformer-tome_d64_8xb128-100e_cifar100-224px.py',
    'adaptformer-evit':
    'configs/dyt/vit-b-p16-adaptformer-evit_d64_8xb128-100e_cifar100-224px.py',
    'adaptformer-evit-warmup':
    'configs/dyt/vit-b-p16-adaptformer-evit-warmup_d64_8xb128-100e_cifar100-224px.py',
    'adaptformer-dynamicvit':
    'configs/dyt/vit-b-p16-adaptformer-dynamicvit_d64_8xb128-100e_cifar100-224px.py',
}
launcher = dict(type='pytorch', gpus=8)
table = dict(
    rows=['config'], metrics=['accuracy/top1_best_epoch', 'accuracy/top1', 'act_rate', 'gflops'])
