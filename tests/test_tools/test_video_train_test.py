"""tools/train.py and tools/test.py on the generated video clips (mmaction2 scope):
DyTRecognizer3D learns from real .mp4 files read through mmaction2's pipeline,
logs DyT's terms, the checkpoint evaluates to what validation measured, and the
same config trained twice logs the same numbers."""
import json

import pytest

from helpers.configs import DYT_VIDEO_CFG
from helpers.tools import REPO, logged_metrics, logged_test_scalars, plain_shell_env, run_tool

# A 2-block ViT (the config's is 6) at a learning rate for 30 steps: 5 epochs of
# 6 batches of 8 clips, validated once at the end.
OPTIONS = [
    'train_cfg.max_epochs=5', 'train_cfg.val_interval=5', 'default_hooks.logger.interval=1',
    'default_hooks.checkpoint.save_best=None', 'model.backbone.vit.arch.num_layers=2',
    'optim_wrapper.optimizer.lr=3e-3', 'train_dataloader.num_workers=0',
    'val_dataloader.num_workers=0', 'test_dataloader.num_workers=0'
]


@pytest.fixture(scope='module')
def video_workspace(tmp_path_factory):
    """A working directory whose ``data/video_shapes`` holds the generated clips."""
    from mmvitdyn.datasets import generate_video_shapes
    root = tmp_path_factory.mktemp('video-workspace')
    generate_video_shapes(str(root / 'data/video_shapes'))
    return root


def scalars(work_dir) -> list:
    """The records of the run's ``scalars.json``, timings left out."""
    found, = work_dir.glob('*/vis_data/scalars.json')
    timing = ('time', 'data_time', 'eta', 'memory')
    return [{
        k: v
        for k, v in json.loads(line).items() if k not in timing
    } for line in found.read_text().splitlines()]


@pytest.fixture(scope='module')
def trained(video_workspace, tmp_path_factory):
    """The work dir and logged records of a short training run."""
    work_dir = tmp_path_factory.mktemp('dyt-video')
    proc = run_tool(['train.py', DYT_VIDEO_CFG, '--work-dir', work_dir, '--cfg-options', *OPTIONS],
                    video_workspace)
    assert 'seed: 0\n' in proc.stdout
    return work_dir, scalars(work_dir)


def test_training_lowers_the_loss_and_logs_dyt_s_terms(trained):
    _, records = trained
    steps = [r for r in records if 'loss' in r]
    assert len(steps) == 30
    assert {'loss_cls', 'loss_cls_complete', 'loss_distill', 'loss_rate',
            'act_rate'} <= set(steps[0])
    first = sum(r['loss_cls'] for r in steps[:3]) / 3
    last = sum(r['loss_cls'] for r in steps[-3:]) / 3
    assert first > 1.05 and last < 0.9 * first  # from chance (ln 3 = 1.099) down
    assert all(0 < r['act_rate'] < 1 for r in steps)
    validated, = [r for r in records if 'acc/top1' in r]
    assert validated['acc/top1'] > 0.5  # 3 classes: chance is 1/3
    assert 0 < validated['act_rate'] < 1  # DispatchRateHook


def test_the_checkpoint_evaluates_to_what_validation_measured(trained, video_workspace, tmp_path):
    work_dir, records = trained
    proc = run_tool([
        'test.py', DYT_VIDEO_CFG, work_dir / 'epoch_5.pth', '--work-dir', tmp_path, '--out',
        tmp_path / 'preds.pkl', '--cfg-options', *OPTIONS
    ], video_workspace)
    validated, = [r for r in records if 'acc/top1' in r]
    assert logged_metrics(proc.stdout)['acc/top1'] == pytest.approx(validated['acc/top1'], abs=1e-4)
    assert logged_test_scalars(tmp_path)['acc/top1'] == pytest.approx(validated['acc/top1'])
    assert (tmp_path / 'preds.pkl').stat().st_size > 0


def test_the_same_config_twice_logs_the_same_numbers(trained, video_workspace, tmp_path):
    _, first = trained
    run_tool(['train.py', DYT_VIDEO_CFG, '--work-dir', tmp_path, '--cfg-options', *OPTIONS],
             video_workspace)
    assert scalars(tmp_path) == first


def test_two_process_cpu_distributed_training_keeps_the_ranks_equal(video_workspace, tmp_path):
    """tools/dist_train.sh with 2 CPU processes: 48 clips / (2 ranks x 4) = 6 steps an
    epoch for 2 epochs, DyT's two-pass step in the DDP wrapper, both ranks' parameters the same."""
    cfg = tmp_path / 'video_digest.py'
    cfg.write_text(f"_base_ = ['{DYT_VIDEO_CFG}']\n"
                   "custom_imports = dict(imports=['mmvitdyn', 'param_digest_hook'])\n"
                   "custom_hooks = [dict(type='ParamDigestHook')]\n")
    opts = [
        *OPTIONS[1:], 'train_cfg.max_epochs=2', 'train_dataloader.batch_size=4',
        'default_hooks.checkpoint.interval=2'
    ]
    proc = run_tool(
        ['dist_train.sh', cfg, 2, '--work-dir', tmp_path, '--cfg-options', *opts],
        video_workspace,
        env=dict(**plain_shell_env(), PORT='29519', PYTHONPATH=f'{REPO}:{REPO}/tests/helpers'))
    assert 'Epoch(train) [2][6/6]' in proc.stdout
    digests = [json.loads((tmp_path / f'param_digest_rank{r}.json').read_text()) for r in (0, 1)]
    assert digests[0] == digests[1]
    assert any('dispatchers' in name for name in digests[0])
    assert (tmp_path / 'epoch_2.pth').is_file()
