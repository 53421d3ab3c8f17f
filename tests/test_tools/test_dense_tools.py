"""tools/train.py and tools/test.py on the small DyT detection and segmentation configs."""
from helpers.configs import DYT_ADE_CFG, DYT_COCO_CFG
from helpers.tools import logged_metrics, run_tool


def train_log_lines(stdout: str) -> list:
    return [line for line in stdout.splitlines() if '(train)' in line and 'loss:' in line]


def test_dyt_vitdet_mask_rcnn(data_workspace, tmp_path):
    opts = [
        'train_cfg.max_epochs=1', 'default_hooks.checkpoint.interval=1',
        'default_hooks.logger.interval=1'
    ]
    proc = run_tool(
        ['train.py', DYT_COCO_CFG, '--work-dir', tmp_path, '--no-validate', '--cfg-options', *opts],
        data_workspace)
    lines = train_log_lines(proc.stdout)
    assert len(lines) == 2  # 8 images, batch 4
    for key in ('loss_rpn_cls', 'loss_mask', 'loss_rate', 'act_rate/3.mlp', 'act_rate'):
        assert f'{key}: ' in lines[-1], lines[-1]
    proc = run_tool(['test.py', DYT_COCO_CFG, tmp_path / 'epoch_1.pth', '--work-dir', tmp_path],
                    data_workspace)
    metrics = logged_metrics(proc.stdout)
    assert all(0 <= metrics[k] <= 1 for k in ('coco/bbox_mAP', 'coco/segm_mAP'))
    assert 0 < metrics['act_rate'] < 1


def test_dyt_upernet(data_workspace, tmp_path):
    opts = [
        'train_cfg.max_iters=2', 'default_hooks.checkpoint.interval=2',
        'default_hooks.logger.interval=1'
    ]
    proc = run_tool(
        ['train.py', DYT_ADE_CFG, '--work-dir', tmp_path, '--no-validate', '--cfg-options', *opts],
        data_workspace)
    lines = train_log_lines(proc.stdout)
    assert len(lines) == 2
    for key in ('decode.loss_ce', 'aux.loss_ce', 'loss_rate', 'act_rate/3.mlp', 'act_rate'):
        assert f'{key}: ' in lines[-1], lines[-1]
    proc = run_tool(['test.py', DYT_ADE_CFG, tmp_path / 'iter_2.pth', '--work-dir', tmp_path],
                    data_workspace)
    metrics = logged_metrics(proc.stdout)
    assert 0 <= metrics['mIoU'] <= 100 and 0 < metrics['aAcc'] <= 100
    assert 0 < metrics['act_rate'] < 1
