"""docs/finetune_custom_data.md: its configs are the files of configs/examples/,
and its commands, run on the generated sets written in the guide's layouts,
train, test and log what the guide says (see conftest.py for the workspace)."""
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import DATASETS, init_default_scope

from helpers.configs import RANDOM_FROZEN, renamed_to
from helpers.guides import (CLS_CONFIG, DIGIT_CLASSES, EXAMPLES, FINETUNE_GUIDE, IMAGES_PER_CLASS,
                            SEG_CLASSES, TOOLS_GUIDE, VIT_TINY, command, fenced_blocks, json_logs,
                            run_command)
from helpers.tools import REPO, load_tool, logged_metrics
from mmvitdyn.datasets import check_data_roots
from mmvitdyn.engine import SetupError
from mmvitdyn.engine.class_counts import check_class_counts

VTAB_TEMPLATE = REPO / 'configs/dyt/vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py'


def test_the_guides_show_the_example_configs():
    blocks = fenced_blocks(FINETUNE_GUIDE, 'python') + fenced_blocks(TOOLS_GUIDE, 'python')
    configs = sorted(p for p in EXAMPLES.glob('*.py') if not renamed_to(p))  # earlier names aside
    assert len(configs) == 7
    for config in configs:
        assert config.read_text() in blocks, f'{config.name} is not shown as it is'


def test_the_first_command_names_the_converter(guide_workspace, monkeypatch, capsys):
    """The guide's train command as typed, before the weights are converted."""
    monkeypatch.chdir(guide_workspace)
    tokens = command(FINETUNE_GUIDE, f'python tools/train.py {CLS_CONFIG}')
    with pytest.raises(SystemExit):
        load_tool('train.py').main(tokens[2:])
    error = capsys.readouterr().err
    assert "model.backbone.init_cfg.checkpoint='checkpoints/vit-base-p16_in21k.pth' does not " \
        'exist' in error
    converter = command(FINETUNE_GUIDE,
                        'python tools/model_converters/timm2mmvitdyn.py jx_vit_base')
    assert ' '.join(converter) in error
    shown = next(b for b in fenced_blocks(FINETUNE_GUIDE, '') if 'vit-base-p16_in21k' in b)
    after_cwd = ' '.join(shown.split('/path/to/cwd).')[1].split())
    assert after_cwd in ' '.join(error.split())  # the guide shows the error as it is


def test_the_ann_file_trap_and_its_fix(guide_workspace, monkeypatch, capsys):
    """The ImageFolder config's data lines on the VTAB-1K config, as the guide's
    pitfall describes: tools/train.py stops with the lines the guide shows;
    with ann_file='' in each dataloader the data is found."""
    monkeypatch.chdir(guide_workspace)
    diff = (EXAMPLES / 'vit-b-p16-dyt_d16_1xb64-100e_my-set-224px.py').read_text()
    data_lines = diff[diff.index('train_dataloader'):]
    trap = guide_workspace / 'trap.py'
    trap.write_text(f'_base_ = [{str(VTAB_TEMPLATE)!r}]\n{data_lines}')
    with pytest.raises(SystemExit):
        load_tool('train.py').main([str(trap), '--cfg-options', 'model.backbone.init_cfg=None'])
    error = capsys.readouterr().err
    shown = next(b for b in fenced_blocks(FINETUNE_GUIDE, '') if 'train800val200.txt' in b)
    for line in shown.splitlines():  # up to the hint, after the program's name
        assert line.split('error: ')[-1].split('; ')[0] in error
    fixed = Config.fromfile(str(trap))
    for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        fixed[loader].dataset.ann_file = ''
    check_data_roots(fixed)
    with pytest.raises(
            SetupError,
            match='model.head.num_classes=3 but train_dataloader.dataset.'
            'num_classes declares 100 classes'):
        check_class_counts(fixed)
    for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        fixed[loader].dataset.num_classes = 3
    check_class_counts(fixed)


def test_classification_image_folder(classification_run):
    work_dir, train_out, test_out = classification_run
    assert (work_dir / 'epoch_2.pth').is_file()
    assert len(list(work_dir.glob('best_accuracy_top1_epoch_*.pth'))) == 1
    records = json_logs(work_dir)[0]  # the training run (tools/test.py logged after it)
    train = [r for r in records if 'loss' in r]
    val = [r for r in records if 'accuracy/top1' in r]
    assert len(train) == len(val) == 2  # one line at the end of each epoch, one validation each
    for record in train:
        parts = ('loss_cls', 'loss_cls_complete', 'loss_distill', 'loss_rate')
        assert record['loss'] == pytest.approx(sum(record[p] for p in parts), rel=1e-4)
        blocks = [k for k in record if re.fullmatch(r'act_rate/\d+\.mlp', k)]
        assert len(blocks) == 12 and 0 <= record['act_rate'] <= 1
    assert all('act_rate' in r and 'accuracy/top1_best_epoch' in r for r in val)
    metrics = logged_metrics(test_out)
    val_images = IMAGES_PER_CLASS * len(DIGIT_CLASSES)
    correct = metrics['accuracy/top1'] * val_images / 100
    assert correct == pytest.approx(round(correct), abs=0.01)
    assert 'act_rate' in metrics
    assert (work_dir.parent / 'my-set-preds.pkl').is_file()


@pytest.mark.parametrize(
    'config, options', [
        ('configs/examples/vit-ti-p16-dyt_d16_1xb32-10e_my-set-224px.py', [
            'train_cfg.max_epochs=1', 'train_dataloader.batch_size=4',
            'val_dataloader.batch_size=12'
        ]),
        ('configs/examples/mask-rcnn_vitdet-ti-dyt_d128_1xb2-12e_my-coco-512x512.py',
         ['train_cfg.max_epochs=1', 'train_cfg.val_interval=1']),
        ('configs/examples/upernet_vit-ti-p16-dyt_d64_1xb4-1k_my-seg-256x256.py', [
            'train_cfg.max_iters=2', 'train_cfg.val_interval=2',
            'default_hooks.checkpoint.interval=2'
        ]),
    ],
    ids=['classification', 'detection', 'segmentation'])
def test_the_cpu_configs_train_from_the_converted_vit_tiny(config, options, cpu_workspace):
    """Each guide's CPU command as typed (the run cut short) on the ViT-Ti/16 file
    the guide's converter wrote: training starts from it (no random frozen
    weights) and the frozen ViT-Ti/16 in the last checkpoint is timm's, weight
    for weight."""
    root, expected = cpu_workspace
    run_command(command(FINETUNE_GUIDE, f'python tools/train.py {config}'), root, options)
    work_dir = root / 'work_dirs' / Path(config).stem
    last = (work_dir / 'last_checkpoint').read_text().strip()
    trained = torch.load(last, weights_only=False)['state_dict']
    for name in ('patch_embed.proj.weight', 'blocks.0.attn.qkv.weight', 'blocks.11.mlp.fc2.weight'):
        torch.testing.assert_close(trained[f'backbone.{name}'], expected[name], rtol=0, atol=0)
    assert trained['backbone.blocks.11.mlp.fc2.weight'].shape == (192, 768)


def test_onnx_export_and_runtime_snippet(classification_run, guide_workspace):
    """The guide's export command as typed (``epoch_2.pth`` for ``epoch_100.pth``,
    the tiny ViT) prints the interface the guide shows; its ``onnx_predict.py``
    run as typed through the shell (the glob included) with ONNX Runtime gives
    each validation image the class and softmax score that tools/test.py
    dumped for it."""
    export = [
        token.replace('epoch_100.pth', 'epoch_2.pth')
        for token in command(FINETUNE_GUIDE, 'python tools/deployment/pytorch2onnx.py')
    ]
    printed = run_command(export, guide_workspace, VIT_TINY).stdout
    shown = next(b for b in fenced_blocks(FINETUNE_GUIDE, '') if "input 'images'" in b)
    for line in shown.splitlines():
        assert line in printed.splitlines()
    snippet = next(b for b in fenced_blocks(FINETUNE_GUIDE, 'python') if 'onnx_predict.py' in b)
    (guide_workspace / 'onnx_predict.py').write_text(snippet)
    typed = ' '.join(command(FINETUNE_GUIDE, 'python onnx_predict.py'))
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ['PATH']])
    proc = subprocess.run(['bash', '-c', typed],
                          cwd=guide_workspace,
                          env={
                              **os.environ, 'PATH': path
                          },
                          capture_output=True,
                          text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    predicted = {line.split()[0]: line.split()[1:] for line in proc.stdout.splitlines()}
    assert len(predicted) == IMAGES_PER_CLASS * len(DIGIT_CLASSES)
    classes = sorted(DIGIT_CLASSES)  # ImageFolder: the folder names, sorted
    dumped = pickle.loads((guide_workspace / 'work_dirs/my-set-preds.pkl').read_bytes())
    assert len(dumped) == len(predicted)
    for sample in dumped:
        name, score = predicted[sample['img_path']]
        assert name == classes[int(sample['pred_label'])]
        assert float(score) == pytest.approx(float(sample['pred_score'].max()), abs=1e-4)


def test_the_class_count_pitfall_shows_the_error(guide_workspace, monkeypatch, capsys):
    """The guide's class-count error, as tools/train.py prints it for its
    ImageFolder config with a 4-class head on the 3 class folders."""
    monkeypatch.chdir(guide_workspace)
    with pytest.raises(SystemExit):
        load_tool('train.py').main([
            CLS_CONFIG, '--cfg-options', *VIT_TINY, 'model.backbone.init_cfg=None', RANDOM_FROZEN,
            'model.head.num_classes=4'
        ])
    error = ' '.join(capsys.readouterr().err.split())
    shown = next(b for b in fenced_blocks(FINETUNE_GUIDE, '') if 'num_classes=4' in b)
    assert ' '.join(shown.split('error: ', 1)[1].split()).rstrip(' .') in error  # after the name


def test_classification_list_files_read_the_same_images(guide_workspace, monkeypatch):
    """The list-file config's data sets: the images the list files name, with
    the labels of metainfo's classes (the list files were written by class
    folder)."""
    monkeypatch.chdir(guide_workspace)
    cfg = Config.fromfile(
        str(guide_workspace / 'configs/examples/vit-b-p16-dyt_d16_1xb64-100e_my-set-list-224px.py'))
    init_default_scope('mmpretrain')
    for loader, split in (('train_dataloader', 'train'), ('val_dataloader', 'val')):
        dataset = DATASETS.build(cfg[loader].dataset)
        assert dataset.metainfo['classes'] == tuple(DIGIT_CLASSES)
        assert len(dataset) == IMAGES_PER_CLASS * len(DIGIT_CLASSES)
        for index in range(len(dataset)):
            info = dataset.get_data_info(index)
            folder = info['img_path'].split('/')[-2]
            assert info['img_path'].startswith(f'data/my_set/{split}/')
            assert info['gt_label'] == list(DIGIT_CLASSES).index(folder)


def test_detection(guide_workspace):
    """The detection config's diff on the small ViTDet config (1 epoch of one
    iteration on 4 images, then validation, which runs what tools/test.py
    runs)."""
    tokens = command(FINETUNE_GUIDE, 'python tools/train.py configs/examples/mask-rcnn_vitdet-b')
    # the guide's option for the CPU, then a short schedule
    proc = run_command(tokens, guide_workspace, [
        'optim_wrapper.type=OptimWrapper', 'train_cfg.max_epochs=1', 'train_cfg.val_interval=1',
        'train_dataloader.dataset.indices=4'
    ])
    work_dir = guide_workspace / 'work_dirs' / Path(tokens[2]).stem
    assert (work_dir / 'epoch_1.pth').is_file()
    (train, val), = json_logs(work_dir)
    for key in ('loss_rpn_cls', 'loss_bbox', 'loss_mask', 'loss_rate', 'act_rate'):
        assert key in train
    for key in ('coco/bbox_mAP', 'coco/segm_mAP', 'act_rate'):
        assert key in val
    assert 'coco/bbox_mAP' in proc.stdout


def test_segmentation(guide_workspace):
    """The segmentation config's diff on the small UperNet config (2
    iterations, then validation, which runs what tools/test.py runs)."""
    tokens = command(FINETUNE_GUIDE, 'python tools/train.py configs/examples/upernet_vit-b')
    proc = run_command(tokens, guide_workspace, [
        'train_cfg.max_iters=2', 'train_cfg.val_interval=2', 'default_hooks.checkpoint.interval=2'
    ])
    work_dir = guide_workspace / 'work_dirs' / Path(tokens[2]).stem
    assert (work_dir / 'iter_2.pth').is_file()
    records, = json_logs(work_dir)
    assert {'decode.loss_ce', 'aux.loss_ce', 'loss_rate', 'act_rate'} <= set(records[0])
    assert {'mIoU', 'aAcc', 'act_rate'} <= set(records[-1])
    table = [
        line.split('|')[1].strip() for line in proc.stdout.splitlines()
        if re.match(r'\|\s+\w+\s+\|\s+[\d.nan]+\s+\|', line)
    ]
    assert table == list(SEG_CLASSES)
