"""Training loses nothing: ``kill -9`` mid-epoch then ``--resume``, and a save that fails."""
import json
import re
import resource
import signal
import time

import torch
from mmengine.config import Config

from helpers.configs import VIT_DIGITS_CFG
from helpers.tools import run_tool, start_tool
from mmvitdyn.checkpoint import load_checkpoint_file
from mmvitdyn.engine import AtomicCheckpointHook
from mmvitdyn.engine.runner_setup import make_resumable

# 6 iterations of 16 images per epoch, each loss logged, a checkpoint and a
# validation (which draws random numbers) after each epoch.
OPTS = [
    'train_dataloader.dataset.indices=96', 'train_dataloader.batch_size=16',
    'val_dataloader.dataset.indices=16', 'default_hooks.logger.interval=1',
    'default_hooks.checkpoint.interval=1', 'train_cfg.val_interval=1', 'randomness.seed=3',
    'randomness.deterministic=True', 'train_cfg.max_epochs=3'
]
ITERS_PER_EPOCH = 6


def logged_losses(run_dir) -> dict:
    """iteration -> training loss, from a run's ``vis_data/scalars.json``."""
    lines = (run_dir / 'vis_data/scalars.json').read_text().splitlines()
    records = [json.loads(line) for line in lines if line]
    return {r['iter']: r['loss'] for r in records if 'loss' in r}


def run_dirs(work_dir) -> list:
    """The timestamped directories of the runs in ``work_dir``, oldest first."""
    return sorted(p.parent.parent for p in work_dir.glob('*/vis_data/scalars.json'))


def train_args(work_dir, *extra) -> list:
    return ['train.py', VIT_DIGITS_CFG, '--work-dir', work_dir, *extra, '--cfg-options', *OPTS]


def test_kill_mid_epoch_then_resume_repeats_the_uninterrupted_run(data_workspace, tmp_path):
    straight, killed = tmp_path / 'straight', tmp_path / 'killed'
    # The uninterrupted run and the one to kill run side by side.
    with open(tmp_path / 'straight.log', 'w') as log:
        reference = start_tool(train_args(straight), data_workspace, stdout=log)
    try:
        proc = start_tool(train_args(killed), data_workspace)
        output = []
        for line in proc.stdout:  # kill -9 half-way through the second epoch
            output.append(line)
            step = re.search(r'Epoch\(train\)\s+\[2\]\[\s*(\d+)/', line)
            if step and int(step.group(1)) == ITERS_PER_EPOCH // 2:
                proc.send_signal(signal.SIGKILL)
                break
        proc.wait()
        assert proc.returncode == -signal.SIGKILL, ''.join(output[-40:])
        assert reference.wait(timeout=600) == 0, (tmp_path / 'straight.log').read_text()[-3000:]
    finally:
        reference.kill()  # no-op once it has exited
    assert (killed / 'epoch_1.pth').is_file() and not (killed / 'epoch_2.pth').exists()

    proc = run_tool(train_args(killed, '--resume'), data_workspace)
    assert f'resumed epoch: 1, iter: {ITERS_PER_EPOCH}' in proc.stdout, proc.stdout[-3000:]

    expected = logged_losses(run_dirs(straight)[0])
    assert sorted(expected) == list(range(1, 3 * ITERS_PER_EPOCH + 1))
    first_run, resumed = (logged_losses(d) for d in run_dirs(killed))
    # The killed run was the same run up to the kill ...
    assert first_run == {i: expected[i] for i in first_run}
    assert ITERS_PER_EPOCH < max(first_run) < 2 * ITERS_PER_EPOCH
    # ... and the resumed one continues it exactly, from the first checkpoint.
    assert resumed == {i: expected[i] for i in range(ITERS_PER_EPOCH + 1, 3 * ITERS_PER_EPOCH + 1)}
    weights = [
        load_checkpoint_file(str(run / 'epoch_3.pth'))['state_dict'] for run in (straight, killed)
    ]
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


def test_a_failed_save_keeps_the_previous_checkpoint(data_workspace, tmp_path):
    opts = [
        'train_dataloader.dataset.indices=96', 'train_dataloader.batch_size=16',
        'default_hooks.checkpoint.interval=1', 'default_hooks.checkpoint.max_keep_ckpts=1',
        'default_hooks.checkpoint.save_best=None', 'train_cfg.val_interval=100',
        'train_cfg.max_epochs=3'
    ]
    log = tmp_path / 'train.log'
    with open(log, 'w') as out:
        proc = start_tool(
            ['train.py', VIT_DIGITS_CFG, '--work-dir', tmp_path / 'run', '--cfg-options', *opts],
            data_workspace,
            stdout=out)
        last = tmp_path / 'run/last_checkpoint'
        while not last.exists() and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, log.read_text()[-3000:]
        # From now on no file of the process may exceed 1 MiB (the checkpoint
        # holds ~30 MB): the second epoch's save fails part-way, like a full disk.
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
        proc.wait(timeout=600)
    text = log.read_text()
    assert proc.returncode != 0 and 'File too large' in text, text[-3000:]
    assert re.search(r'Epoch\(train\)\s+\[2\]\[6/6\]', text)  # it failed saving epoch 2
    assert [p.name for p in (tmp_path / 'run').iterdir() if 'epoch' in p.name] == ['epoch_1.pth']
    assert last.read_text() == str(tmp_path / 'run/epoch_1.pth')
    assert load_checkpoint_file(last.read_text())['meta']['epoch'] == 1


def test_train_py_makes_a_config_resumable():
    cfg = Config(
        dict(
            default_hooks=dict(checkpoint=dict(type='CheckpointHook', interval=2)),
            custom_hooks=[dict(type='DispatchRateHook')]))
    make_resumable(cfg)
    make_resumable(cfg)  # idempotent
    assert cfg.default_hooks.checkpoint == dict(type='AtomicCheckpointHook', interval=2)
    assert cfg.custom_hooks == [dict(type='DispatchRateHook'), dict(type='EpochSeedHook')]


def test_atomic_writing_is_for_local_checkpoints_without_backend_args():
    assert AtomicCheckpointHook(interval=1).backend_args == dict(backend='atomic_local')
    assert AtomicCheckpointHook(
        interval=1, out_dir='ckpts').backend_args == dict(backend='atomic_local')
    kept = dict(backend='local')
    assert AtomicCheckpointHook(interval=1, backend_args=kept).backend_args == kept
