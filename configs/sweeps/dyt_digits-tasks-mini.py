# A sweep that runs on a CPU in a few minutes: 3 small digits "tasks" (the
# default split, another random split, 16 px images upsampled) x DyT and
# AdaptFormer x 2 seeds, each cell 2 epochs of one 32-image batch on a
# random frozen ViT (no trained ViT needed; the accuracies mean nothing).
# Its data: see docs/sweeps.md (tools/dataset_converters/gen_digits.py).
#   python tools/sweep.py configs/sweeps/dyt_digits-tasks-mini.py
#   python tools/collect_results.py configs/sweeps/dyt_digits-tasks-mini.py
configs = {'vit-mini': 'configs/dyt/vit-mini-p4-dyt_1xb32-8e_digits-32px.py'}
# The tasks' data roots (their --cfg-options below).
_tasks = {
    'digits': 'data/digits-mini',
    'digits-split1': 'data/digits-mini-split1',
    'digits-16px': 'data/digits-mini-16px',
}
axes = dict(
    task={
        task: [
            f'{loader}.dataset.data_root={root}'
            for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader')
        ]
        for task, root in _tasks.items()
    },
    # AdaptFormer: the DyT config's DyTViT without dispatchers (AdapterViT's model).
    method=dict(dyt=[], adaptformer=['model.backbone.dispatch=None']),
    seed=dict(s0=['randomness.seed=0'], s1=['randomness.seed=1']))
options = [
    'model.backbone.allow_random_frozen=True', 'train_cfg.max_epochs=2', 'train_cfg.val_interval=2',
    'train_dataloader.dataset.indices=32', 'val_dataloader.dataset.indices=32',
    'train_dataloader.num_workers=0', 'val_dataloader.num_workers=0',
    'test_dataloader.num_workers=0', 'default_hooks.logger.interval=1'
]
launcher = dict(type='local', max_parallel=2)
table = dict(
    rows=['method', 'seed'],
    columns='task',
    seed_axes=['seed'],
    metrics=['accuracy/top1', 'act_rate'])
