# DyT's VTAB-1K table: the 19 tasks x DyT (d = 16 and d = 8), AdaptFormer,
# full fine-tuning and the four dispatch variants (MLP, attention,
# attention-MLP, layer), each on its task's config with the options of
# docs/recipes.md. One GPU per cell, batch 64, as the public train_vtab.sh.
#   python tools/sweep.py configs/sweeps/dyt_vtab1k.py --dry-run
#   python tools/collect_results.py configs/sweeps/dyt_vtab1k.py
# The paper reports the best test accuracy over the epochs
# (accuracy/top1_best_epoch); the final epoch's is beside it.
configs = 'configs/dyt/vit-b-p16-dyt_d16_1xb64-100e_vtab1k-*-224px.py'
axes = dict(
    method={
        # MLP dispatch, r = 0.5: the task configs as they are.
        'dyt-d16': [],
        'dyt-d8': ['model.backbone.adapter_cfg.bottleneck=8'],
        # The baselines as options on the task configs: a DyTViT without
        # dispatchers (and adapters), whose parameters, trainable set and outputs
        # are AdapterViT's (ViT's); options cannot change the class, which the
        # *adaptformer* / *full-ft* configs build (docs/recipes.md).
        'adaptformer': ['model.backbone.dispatch=None'],
        'full-ft': [
            'model.backbone.dispatch=None', 'model.backbone.adapter_cfg=None',
            'model.backbone.freeze_pretrained=False'
        ],
        'dyt-attn': ['model.backbone.dispatch=attn'],
        # The rates the paper pairs with the two-gate variants (matched FLOPs).
        'dyt-attn-mlp': ['model.backbone.dispatch=attn_mlp', 'model.backbone.target_rate=0.7'],
        'dyt-layer': ['model.backbone.dispatch=layer', 'model.backbone.target_rate=0.7'],
    })
launcher = dict(type='local', max_parallel=1)
# The standard VTAB-1K grouping of the tasks (the config names' spelling).
table = dict(
    rows=['method'],
    columns='config',
    groups=dict(
        Natural=[
            'cifar', 'caltech101', 'dtd', 'oxford-flowers102', 'oxford-iiit-pet', 'svhn', 'sun397'
        ],
        Specialized=['patch-camelyon', 'eurosat', 'resisc45', 'diabetic-retinopathy'],
        Structured=[
            'clevr-count', 'clevr-dist', 'dmlab', 'kitti', 'dsprites-loc', 'dsprites-ori',
            'smallnorb-azi', 'smallnorb-ele'
        ]),
    metrics=['accuracy/top1_best_epoch', 'accuracy/top1', 'act_rate', 'gflops'])
