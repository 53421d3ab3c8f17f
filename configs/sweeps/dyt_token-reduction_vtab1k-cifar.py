# The DyT authors' token-reduction comparison on VTAB-1K (review answer W5:
# d = 8 adapters), on the 'cifar' task of the template configs: DyT (d = 8 and
# 16), DyT top-K / soft top-K (d = 16), DyT + ToMe, and AdaptFormer + ToMe /
# EViT / DynamicViT. One GPU per cell, batch 64.
#   python tools/sweep.py configs/sweeps/dyt_token-reduction_vtab1k-cifar.py --dry-run
configs = {
    'dyt-d8':
    'configs/dyt/vit-b-p16-dyt_d8_1xb64-100e_vtab1k-224px.py',
    'dyt-d16':
    'configs/dyt/vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py',
    'dyt-topk-d16':
    'configs/dyt/vit-b-p16-dyt-topk_d16_1xb64-100e_vtab1k-224px.py',
    'dyt-soft-topk-d16':
    'configs/dyt/vit-b-p16-dyt-soft-topk_d16_1xb64-100e_vtab1k-224px.py',
    'dyt-tome-d8':
    'configs/dyt/vit-b-p16-dyt-tome_d8_1xb64-100e_vtab1k-224px.py',
    'adaptformer-tome-d8':
    'configs/dyt/vit-b-p16-adaptformer-tome_d8_1xb64-100e_vtab1k-224px.py',
    'adaptformer-evit-d8':
    'configs/dyt/vit-b-p16-adaptformer-evit_d8_1xb64-100e_vtab1k-224px.py',
    'adaptformer-dynamicvit-d8':
    'configs/dyt/vit-b-p16-adaptformer-dynamicvit_d8_1xb64-100e_vtab1k-224px.py',
}
launcher = dict(type='local', max_parallel=1)
table = dict(
    rows=['config'], metrics=['accuracy/top1_best_epoch', 'accuracy/top1', 'act_rate', 'gflops'])
