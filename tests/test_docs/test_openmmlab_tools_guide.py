"""docs/openmmlab_tools.md: mmpretrain's own train.py trains our config, and
mmpretrain's analysis tools read our JSON log and the predictions that
tools/test.py dumped. The guide's configs are the ViT-B/16 recipe; the runs
use ViT-Ti/16 (tests/helpers/guides.py), on the guides' workspace. The
analysis tools run in this process, as scripts (their imports are done)."""
import pickle
import subprocess
import sys
from pathlib import Path

from helpers.configs import RANDOM_FROZEN
from helpers.guides import (DIGIT_CLASSES, IMAGES_PER_CLASS, TOOLS_GUIDE, VIT_TINY, command,
                            json_logs, run_command, run_in_process)
from helpers.tools import tool_command

PNG = b'\x89PNG\r\n\x1a\n'


def test_stock_train_py_trains_our_config(guide_workspace):
    """The guide's stock train.py command on the list-file config, 1 epoch on
    random frozen weights (no checkpoint to convert)."""
    tokens = command(TOOLS_GUIDE, 'python $MMPRETRAIN/.mim/tools/train.py')
    assert tokens[1].endswith('/mmpretrain/.mim/tools/train.py')
    run_command(
        tokens, guide_workspace, VIT_TINY + [
            'model.backbone.init_cfg=None', RANDOM_FROZEN, 'train_cfg.max_epochs=1',
            'train_dataloader.batch_size=4', 'val_dataloader.batch_size=12'
        ])
    work_dir = guide_workspace / 'work_dirs/vit-b-p16-dyt_d16_1xb64-100e_my-set-list-224px'
    assert (work_dir / 'epoch_1.pth').is_file()
    assert not (work_dir / '.mmvitdyn.lock').exists()  # tools/train.py holds its work dir
    (train, val), = json_logs(work_dir)
    assert {'loss_cls', 'loss_cls_complete', 'loss_distill', 'loss_rate', 'act_rate'} <= set(train)
    assert {'accuracy/top1', 'act_rate'} <= set(val)


def test_mim_train_runs_our_train_py(guide_workspace, tmp_path):
    """The guide's ``mim train mmvitdyn`` command as typed (openmim's command
    line, of this environment's editable install), 1 epoch of the ImageFolder
    config: mim finds mmvitdyn's tools/train.py."""
    tokens = command(TOOLS_GUIDE, 'mim train mmvitdyn')
    _, env = tool_command(['train.py'])
    options = VIT_TINY + [
        'model.backbone.init_cfg=None', RANDOM_FROZEN, 'train_cfg.max_epochs=1',
        'train_dataloader.batch_size=4', 'val_dataloader.batch_size=12'
    ]
    mim = Path(sys.executable).with_name('mim')
    proc = subprocess.run([str(mim), *tokens[1:], '--cfg-options', *options],
                          cwd=guide_workspace,
                          env=env,
                          capture_output=True,
                          text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert '/mmvitdyn/.mim/tools/train.py ' in proc.stdout  # mim's command line, as it says
    work_dir = guide_workspace / tokens[tokens.index('--work-dir') + 1]
    assert (work_dir / 'epoch_1.pth').is_file()


def test_plot_curve_of_act_rate(classification_run, monkeypatch, capsys):
    work_dir, _, _ = classification_run
    monkeypatch.chdir(work_dir.parent.parent)
    train_run = min(p for p in work_dir.iterdir() if p.is_dir())  # tools/test.py ran after it
    tokens = [
        t.replace('TIMESTAMP', train_run.name) for t in command(
            TOOLS_GUIDE, 'python $MMPRETRAIN/.mim/tools/analysis_tools/analyze_logs.py')
    ]
    run_in_process(tokens, monkeypatch)
    out = capsys.readouterr().out
    for key in ('loss', 'act_rate'):
        assert f'metric is {key}\n' in out
    assert (work_dir.parent / 'my-set-curve.png').read_bytes().startswith(PNG)


def test_confusion_matrix_of_the_dumped_predictions(classification_run, monkeypatch):
    work_dir, _, _ = classification_run
    monkeypatch.chdir(work_dir.parent.parent)
    tokens = command(TOOLS_GUIDE,
                     'python $MMPRETRAIN/.mim/tools/analysis_tools/confusion_matrix.py')
    run_in_process(tokens, monkeypatch)
    with open(work_dir.parent / 'my-set-cm.pkl', 'rb') as file:
        matrix = pickle.load(file)
    classes = len(DIGIT_CLASSES)
    assert tuple(matrix.shape) == (classes, classes)
    assert matrix.sum(dim=1).tolist() == [IMAGES_PER_CLASS] * classes  # rows: true classes
    assert (work_dir.parent / 'my-set-cm.png').read_bytes().startswith(PNG)
