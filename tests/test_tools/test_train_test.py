"""tools/train.py and tools/test.py on the generated sets, for all three scopes."""
import glob
import json
import os.path as osp

import pytest

from helpers.configs import DYT_DIGITS_CFG, FCN_ADE_CFG, MASK_RCNN_COCO_CFG, VIT_DIGITS_CFG
from helpers.tools import REPO, logged_metrics, plain_shell_env, run_tool

SMALL_DIGITS = [
    'train_dataloader.dataset.indices=64', 'val_dataloader.dataset.indices=32',
    'test_dataloader.dataset.indices=32', 'default_hooks.logger.interval=1'
]


def test_classification(data_workspace, tmp_path):
    run_tool([
        'train.py', VIT_DIGITS_CFG, '--work-dir', tmp_path, '--cfg-options', *SMALL_DIGITS,
        'train_cfg.max_epochs=3', 'train_cfg.val_interval=3'
    ], data_workspace)
    ckpt = tmp_path / 'epoch_3.pth'
    assert ckpt.is_file()
    proc = run_tool([
        'test.py', VIT_DIGITS_CFG, ckpt, '--work-dir', tmp_path / 'test', '--out',
        tmp_path / 'preds.pkl', '--cfg-options', *SMALL_DIGITS
    ], data_workspace)
    metrics = logged_metrics(proc.stdout)
    assert 0 <= metrics['accuracy/top1'] <= 100
    assert (tmp_path / 'preds.pkl').stat().st_size > 0
    # The demo's summary: the test run's one JSON line (mmengine writes no newline) is its record.
    table = run_tool([
        'collect_results.py', '--work-dirs', f'vit={tmp_path / "test"}', '--metrics',
        'accuracy/top1', '--format', 'csv'
    ], data_workspace).stdout
    assert table.splitlines()[-1] == f'vit,{metrics["accuracy/top1"]:.2f}'


def test_detection(data_workspace, tmp_path):
    opts = [
        'train_cfg.max_epochs=1', 'train_cfg.val_interval=1', 'default_hooks.checkpoint.interval=1',
        'default_hooks.logger.interval=1'
    ]
    proc = run_tool(
        ['train.py', MASK_RCNN_COCO_CFG, '--work-dir', tmp_path, '--cfg-options', *opts],
        data_workspace)
    assert 'loss_mask' in proc.stdout and 'loss_rpn_cls' in proc.stdout
    proc = run_tool(
        ['test.py', MASK_RCNN_COCO_CFG, tmp_path / 'epoch_1.pth', '--work-dir', tmp_path],
        data_workspace)
    metrics = logged_metrics(proc.stdout)
    assert {'coco/bbox_mAP', 'coco/segm_mAP'} <= set(metrics)
    assert all(0 <= metrics[k] <= 1 for k in ('coco/bbox_mAP', 'coco/segm_mAP'))


def test_segmentation(data_workspace, tmp_path):
    # Loading in the main process (num_workers=0), the usual smoke test, although
    # mmseg's data bases keep their workers (persistent_workers=True).
    opts = [
        'train_cfg.max_iters=4', 'train_cfg.val_interval=4', 'default_hooks.checkpoint.interval=4',
        'default_hooks.logger.interval=1', 'train_dataloader.num_workers=0',
        'val_dataloader.num_workers=0'
    ]
    proc = run_tool(['train.py', FCN_ADE_CFG, '--work-dir', tmp_path, '--cfg-options', *opts],
                    data_workspace)
    assert 'decode.loss_ce' in proc.stdout
    proc = run_tool([
        'test.py', FCN_ADE_CFG, tmp_path / 'iter_4.pth', '--work-dir', tmp_path, '--cfg-options',
        'test_dataloader.num_workers=0'
    ], data_workspace)
    metrics = logged_metrics(proc.stdout)
    assert 0 <= metrics['mIoU'] <= 100 and 0 < metrics['aAcc'] <= 100


def test_resume_continues_at_the_right_iteration(data_workspace, tmp_path):
    opts = [
        'train_dataloader.dataset.indices=64', 'train_dataloader.batch_size=32',
        'default_hooks.checkpoint.interval=1', 'default_hooks.checkpoint.save_best=None',
        'default_hooks.logger.interval=1', 'train_cfg.val_interval=100'
    ]
    run_tool([
        'train.py', VIT_DIGITS_CFG, '--work-dir', tmp_path, '--cfg-options', *opts,
        'train_cfg.max_epochs=3'
    ], data_workspace)
    proc = run_tool([
        'train.py', VIT_DIGITS_CFG, '--work-dir', tmp_path, '--resume', '--cfg-options', *opts,
        'train_cfg.max_epochs=4'
    ], data_workspace)
    out = proc.stdout
    assert 'resumed epoch: 3, iter: 6' in out, out[-3000:]
    assert 'Epoch(train) [4][2/2]' in out and 'Epoch(train) [3]' not in out
    assert (tmp_path / 'epoch_4.pth').is_file()


def test_two_process_cpu_distributed_training(data_workspace, tmp_path):
    cfg = tmp_path / 'digits_digest.py'
    cfg.write_text(f"_base_ = ['{VIT_DIGITS_CFG}']\n"
                   "custom_imports = dict(imports=['mmvitdyn', 'param_digest_hook'])\n"
                   "custom_hooks = [dict(type='ParamDigestHook')]\n")
    opts = [
        'train_dataloader.dataset.indices=32', 'train_dataloader.batch_size=8',
        'train_cfg.max_epochs=3', 'train_cfg.val_interval=100',
        'default_hooks.checkpoint.interval=3', 'default_hooks.checkpoint.save_best=None'
    ]
    # As typed in a fresh shell (no environment activated): the script finds the interpreter.
    proc = run_tool(
        ['dist_train.sh', cfg, 2, '--work-dir', tmp_path, '--cfg-options', *opts],
        data_workspace,
        env=dict(**plain_shell_env(), PORT='29517', PYTHONPATH=f'{REPO}:{REPO}/tests/helpers'))
    assert 'Epoch(train) [3][2/2]' in proc.stdout  # 32 images / (2 ranks x 8)
    # the configs' backend is mmengine's default, NCCL, which needs GPUs
    assert proc.stdout.count('No GPU is visible: distributed training uses the gloo backend '
                             "(env_cfg.dist_cfg.backend was 'nccl')") == 1
    digests = [json.loads((tmp_path / f'param_digest_rank{r}.json').read_text()) for r in (0, 1)]
    assert digests[0] == digests[1]
    assert sorted(osp.basename(p) for p in glob.glob(str(tmp_path / '*.pth'))) == ['epoch_3.pth']


SHORT_RUN = ('param_scheduler[1] (CosineAnnealingLR) begins at epoch 1 and ends at 1, from '
             'train_cfg.max_epochs: it must end after it begins. Train longer '
             '(train_cfg.max_epochs > 1)')


@pytest.mark.parametrize(
    'args,message',
    [
        (['configs/vit/missing.py'], "config file 'configs/vit/missing.py' does not exist"),
        ([VIT_DIGITS_CFG, '--amp'], '--amp needs a GPU'),
        # A 1-epoch run under the digits DyT config's 1-epoch warm-up: mmengine would
        # say only "end should be larger than begin".
        ([DYT_DIGITS_CFG, '--cfg-options', 'train_cfg.max_epochs=1'], SHORT_RUN),
        # The configs' pretrained ViT-B file, not converted yet.
        ([
            DYT_DIGITS_CFG, '--cfg-options', 'model.backbone.init_cfg.type=Pretrained',
            'model.backbone.init_cfg.checkpoint=checkpoints/vit-base-p16_in21k.pth'
        ], 'e.g. python tools/model_converters/timm2mmvitdyn.py '
         'jx_vit_base_patch16_224_in21k-e5005f0a.pth checkpoints/vit-base-p16_in21k.pth'),
    ])
def test_clear_errors(data_workspace, args, message):
    proc = run_tool(['train.py', *args], data_workspace, check=False)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr[-2000:]


def test_missing_data_folder_names_path_and_generator(tmp_path):
    proc = run_tool(['train.py', VIT_DIGITS_CFG, '--work-dir', tmp_path / 'w'],
                    tmp_path,
                    check=False)
    assert proc.returncode == 2
    assert 'data/digits' in proc.stderr
    assert 'python tools/dataset_converters/gen_digits.py --out-dir data/digits' in proc.stderr
