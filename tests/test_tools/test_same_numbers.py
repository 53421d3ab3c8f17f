"""Same config, same numbers: the demo's configs, trained twice as typed (no seed
given), log the same losses at every iteration and the same validation metrics:
classification and detection in one process, segmentation under the 2-process
CPU launch."""
import json

import pytest

from helpers.configs import DYT_ADE_CFG, DYT_COCO_CFG, DYT_DIGITS_CFG, RANDOM_FROZEN
from helpers.tools import plain_shell_env, run_tool

RUNS = {
    'classification': (DYT_DIGITS_CFG, [
        'train_dataloader.dataset.indices=64', 'val_dataloader.dataset.indices=32',
        'train_cfg.max_epochs=2', 'train_cfg.val_interval=2', RANDOM_FROZEN
    ]),
    'segmentation': (DYT_ADE_CFG, ['train_cfg.max_iters=6', 'train_cfg.val_interval=6']),
    'detection':
    (DYT_COCO_CFG,
     ['train_dataloader.dataset.indices=4', 'train_cfg.max_epochs=2', 'train_cfg.val_interval=2']),
}
COMMON = ['default_hooks.logger.interval=1', 'default_hooks.checkpoint.save_best=None']


def logged_scalars(work_dir) -> list:
    """Every record of the run's ``scalars.json`` without the timings."""
    scalars, = work_dir.glob('*/vis_data/scalars.json')
    records = [json.loads(line) for line in scalars.read_text().splitlines()]
    timing = ('time', 'data_time', 'eta', 'memory')
    return [{k: v for k, v in record.items() if k not in timing} for record in records]


def train(task, work_dir, workspace, processes=None):
    """Train as typed (``tools/train.py``, or ``tools/dist_train.sh`` with
    ``processes``); the records the run logged."""
    config, options = RUNS[task]
    args = ['--work-dir', work_dir, '--cfg-options', *options, *COMMON]
    if processes:
        env = dict(**plain_shell_env(), PORT='29531')
        proc = run_tool(['dist_train.sh', config, processes, *args], workspace, env=env)
    else:
        proc = run_tool(['train.py', config, *args], workspace)
    assert 'seed: 0\n' in proc.stdout  # the runtimes' seed, as the Runner logs it
    return logged_scalars(work_dir)


@pytest.mark.parametrize('task', ['classification', 'detection'])
def test_two_runs_log_the_same_numbers(task, data_workspace, tmp_path):
    first = train(task, tmp_path / 'first', data_workspace)
    second = train(task, tmp_path / 'second', data_workspace)
    losses = [r['loss'] for r in first if 'loss' in r]
    assert len(losses) >= 2 and len(set(losses)) > 1  # a run that trained
    assert any(len(r) > 1 and 'loss' not in r for r in first)  # and was validated
    assert first == second


def test_two_process_runs_log_the_same_numbers(data_workspace, tmp_path):
    # Segmentation (the demo's UperNet drew a new seed each run): 6 iterations of
    # 2 ranks x 4 images, then the sliding-window validation.
    first = train('segmentation', tmp_path / 'first', data_workspace, processes=2)
    second = train('segmentation', tmp_path / 'second', data_workspace, processes=2)
    assert len([r for r in first if 'loss' in r]) == 6 and 'mIoU' in first[-1]
    assert first == second
