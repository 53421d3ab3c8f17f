"""The best checkpoint survives ``kill -9`` at every point of its save; a work_dir has one run."""
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from mmengine.fileio import get_file_backend
from mmengine.logging import MessageHub

from helpers.best_checkpoint_run import CRASH_POINTS
from helpers.tools import REPO
from mmvitdyn.checkpoint import load_checkpoint_file
from mmvitdyn.engine import AtomicCheckpointHook
from mmvitdyn.utils import WorkDirLock, WorkDirLockedError
from mmvitdyn.utils.work_dir_lock import LOCK_NAME

SCRIPT = REPO / 'tests/helpers/best_checkpoint_run.py'


def run(work_dir, *args) -> subprocess.CompletedProcess:
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(REPO), str(REPO / 'tests')])}
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(work_dir), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600)


def best_files(work_dir) -> list:
    return sorted(p.name for p in work_dir.iterdir() if p.name.startswith('best_'))


def outcome(work_dir) -> tuple:
    """The best files, the best score and path the last checkpoint records, and the
    best file's weights."""
    last = load_checkpoint_file((work_dir / 'last_checkpoint').read_text())
    info = last['message_hub']['runtime_info']
    best = load_checkpoint_file(work_dir / 'best_score_epoch_2.pth')['state_dict']
    return best_files(work_dir), info['best_score'], os.path.basename(info['best_ckpt']), best


@pytest.fixture(scope='module')
def uninterrupted(tmp_path_factory):
    work_dir = tmp_path_factory.mktemp('uninterrupted')
    proc = run(work_dir)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return outcome(work_dir)


@pytest.mark.parametrize('point', sorted(CRASH_POINTS))
def test_a_run_killed_while_saving_its_best_resumes_with_one_right_best(
        tmp_path, uninterrupted, point):
    killed = run(tmp_path, '--crash', point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    temporaries = [p.name for p in tmp_path.iterdir() if '.tmp-' in p.name]
    assert bool(temporaries) == (point in ('resave', 'best'))
    resumed = run(tmp_path, '--resume')
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    files, score, path, weights = outcome(tmp_path)
    assert files == uninterrupted[0] == ['best_score_epoch_2.pth']
    assert score == uninterrupted[1] == 3.0 and path == uninterrupted[2]
    assert weights.keys() == uninterrupted[3].keys()
    assert all(torch.equal(weights[k], uninterrupted[3][k]) for k in weights)
    assert not [p.name for p in tmp_path.iterdir() if '.tmp-' in p.name]


def hold(folder) -> subprocess.Popen:
    """A process that holds ``folder``'s lock until killed (it printed 'held')."""
    return subprocess.Popen([
        sys.executable, '-c',
        textwrap.dedent(f"""
            import sys, time
            from mmvitdyn.utils import WorkDirLock
            WorkDirLock({str(folder)!r}).acquire()
            print('held', flush=True)
            time.sleep(60)
        """)
    ],
                            env={
                                **os.environ, 'PYTHONPATH': str(REPO)
                            },
                            stdout=subprocess.PIPE,
                            text=True)


def test_a_second_run_on_a_held_work_dir_stops_naming_the_holder(tmp_path):
    holder = hold(tmp_path)
    try:
        assert holder.stdout.readline().strip() == 'held'
        with pytest.raises(WorkDirLockedError, match=rf'"pid": {holder.pid}'):
            WorkDirLock(tmp_path).acquire()
        proc = run(tmp_path)
        assert proc.returncode != 0 and 'is in use by another run' in proc.stderr
        assert not (tmp_path / 'last_checkpoint').exists()
    finally:
        holder.kill()
        holder.wait()
    with WorkDirLock(tmp_path):  # the kernel released the killed holder's lock
        pass


def test_a_run_whose_checkpoint_folder_is_held_stops(tmp_path):
    """Two work dirs, one checkpoint ``out_dir``: mmengine saves into
    ``out_dir/<work_dir's name>``, which the first run holds."""
    holder = hold(tmp_path / 'checkpoints/run')  # what a run in first/run holds
    try:
        assert holder.stdout.readline().strip() == 'held'
        proc = run(tmp_path / 'second/run', '--out-dir', tmp_path / 'checkpoints')
        assert proc.returncode != 0
        assert f'{tmp_path / "checkpoints/run"} is in use by another run' in proc.stderr
        assert sorted(p.name for p in (tmp_path / 'checkpoints/run').iterdir()) == [LOCK_NAME]
    finally:
        holder.kill()
        holder.wait()
    assert run(tmp_path / 'second/run', '--out-dir', tmp_path / 'checkpoints').returncode == 0
    assert (tmp_path / 'checkpoints/run/epoch_3.pth').is_file()


def test_a_new_holder_replaces_every_byte_of_the_old_record(tmp_path):
    (tmp_path / LOCK_NAME).write_text('{"pid": 1, "host": "old"}' + ' ' * 4000 + 'stale tail')
    with WorkDirLock(tmp_path):
        holder = json.loads((tmp_path / LOCK_NAME).read_text())
    assert holder['pid'] == os.getpid() and 'stale' not in (tmp_path / LOCK_NAME).read_text()


class FakeRunner:
    """What the hook's best-checkpoint logic uses of a Runner; checkpoints are marker files."""

    def __init__(self, work_dir, epoch, hub_name):
        self.work_dir, self.epoch, self.iter = str(work_dir), epoch, epoch * 10
        self.message_hub = MessageHub.get_instance(hub_name)
        self.logger = logging.getLogger('test_best_checkpoint')

    def save_checkpoint(self, out_dir, filename, *args, **kwargs):
        (Path(out_dir) / filename).write_text(f'epoch {self.epoch}')


def hook_for(runner, work_dir, key='coco/bbox_mAP'):
    hook = AtomicCheckpointHook(interval=2, save_best=key, rule='greater')
    hook.out_dir, hook.file_backend = str(work_dir), get_file_backend(str(work_dir))
    hook.best_ckpt_path = runner.message_hub.get_info('best_ckpt')
    return hook


def test_a_resume_removes_only_earlier_unrecorded_best_files_of_its_metric(tmp_path):
    names = [
        'best_coco_bbox_mAP_epoch_1.pth',  # earlier, unrecorded: a crash left it
        'best_coco_bbox_mAP_epoch_3.pth',  # recorded
        'best_coco_bbox_mAP_epoch_5.pth',  # later: from a run resumed from an older checkpoint
        'best_coco_bbox_mAP_50_epoch_2.pth',  # another metric
        'best_coco_bbox_mAP_epoch_2-1a2b3c4d.pth',  # a published model
    ]
    for name in names:
        (tmp_path / name).write_text('kept?')
    runner = FakeRunner(tmp_path, epoch=4, hub_name='reconcile')
    runner.message_hub.update_info('best_ckpt', str(tmp_path / names[1]))
    hook_for(runner, tmp_path)._reconcile_best(runner)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names[1:])


def test_the_previous_best_stays_until_a_resumable_checkpoint_records_the_new_one(tmp_path):
    (tmp_path / 'best_coco_bbox_mAP_epoch_3.pth').write_text('epoch 3')
    runner = FakeRunner(tmp_path, epoch=5, hub_name='deferred')
    runner.message_hub.update_info('best_score', 0.5)
    runner.message_hub.update_info('best_ckpt', str(tmp_path / 'best_coco_bbox_mAP_epoch_3.pth'))
    hook = hook_for(runner, tmp_path)
    hook.last_ckpt = None  # no checkpoint saved yet by this process (epoch 5 of interval 2)
    hook._save_best_checkpoint(runner, {'coco/bbox_mAP': 0.9})
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        'best_coco_bbox_mAP_epoch_3.pth', 'best_coco_bbox_mAP_epoch_5.pth'
    ]
    runner.epoch = 6
    hook._save_checkpoint_with_step(runner, 6, {})
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        'best_coco_bbox_mAP_epoch_5.pth', 'epoch_6.pth', 'last_checkpoint'
    ]


@pytest.mark.parametrize('recorded', ['victim folder', 'victim file', 'other best name'])
def test_a_recorded_best_path_outside_the_hooks_own_files_is_never_removed(tmp_path, recorded):
    """A checkpoint's ``best_ckpt`` is untrusted data: a crafted one naming any
    folder or file must not make a better score delete it."""
    victim = tmp_path / 'elsewhere' / ('best_coco_bbox_mAP_epoch_3.pth'
                                       if recorded == 'victim file' else 'victim')
    (victim / 'kept' if recorded == 'victim folder' else victim).parent.mkdir(parents=True)
    if recorded == 'victim folder':
        victim.mkdir(exist_ok=True)
        (victim / 'kept').write_text('data')
    elif recorded == 'victim file':
        victim.write_text('data')
    else:
        victim = tmp_path / 'run' / 'notes.txt'
        victim.parent.mkdir()
        victim.write_text('data')
    work = tmp_path / 'run'
    work.mkdir(exist_ok=True)
    runner = FakeRunner(work, epoch=5, hub_name=f'crafted-{recorded}')
    runner.message_hub.update_info('best_score', 0.5)
    runner.message_hub.update_info('best_ckpt', str(victim))
    hook = hook_for(runner, work)
    hook.last_ckpt = str(work / 'epoch_4.pth')
    hook._save_best_checkpoint(runner, {'coco/bbox_mAP': 0.9})
    assert victim.exists() and (work / 'best_coco_bbox_mAP_epoch_5.pth').is_file()
