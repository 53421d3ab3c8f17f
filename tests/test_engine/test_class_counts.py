"""A model head whose class count differs from the classes the data declare is
refused before training (mmdet trains an 80-class head on 3 classes without a
word; a classification head smaller than the labels fails in the loss
without naming anything), and so is one that differs from the classes a data
set reads from its files (3 class folders under a 4-class head trained to
rc 0)."""
import pytest
from mmengine.config import Config
from mmengine.runner import Runner

from helpers.configs import (DYT_ADE_CFG, DYT_COCO_CFG, DYT_CONFIG_DIR, DYT_DIGITS_CFG,
                             RANDOM_FROZEN, VIT_DIGITS_CFG)
from helpers.guides import write_classification_set
from helpers.tools import load_tool
from mmvitdyn.engine import SetupError
from mmvitdyn.engine.class_counts import check_class_counts

DTD_CFG = DYT_CONFIG_DIR / 'vit-b-p16-dyt_d16_1xb64-100e_vtab1k-dtd-224px.py'


@pytest.mark.parametrize(
    'config', [DYT_DIGITS_CFG, DYT_COCO_CFG, DYT_ADE_CFG, DTD_CFG], ids=lambda p: p.stem)
def test_the_configs_agree(config):
    check_class_counts(Config.fromfile(str(config)))


@pytest.mark.parametrize(
    'config, head, value, message', [
        (DYT_COCO_CFG, 'roi_head.bbox_head', 80,
         'model.roi_head.bbox_head.num_classes=80 but train_dataloader.dataset.metainfo.classes '
         'declares 3 classes'),
        (DYT_COCO_CFG, 'roi_head.mask_head', 80,
         'model.roi_head.mask_head.num_classes=80 but train_dataloader'),
        (DYT_ADE_CFG, 'auxiliary_head', 150,
         'model.auxiliary_head.num_classes=150 but train_dataloader.dataset.metainfo.classes '
         'declares 5 classes'),
        (DTD_CFG, 'head', 100,
         'model.head.num_classes=100 but train_dataloader.dataset.num_classes declares 47'),
    ],
    ids=['mmdet-bbox', 'mmdet-mask', 'mmseg-auxiliary', 'vtab-dtd'])
def test_a_head_of_another_size_is_refused(config, head, value, message):
    cfg = Config.fromfile(str(config))
    cfg.merge_from_dict({f'model.{head}.num_classes': value})
    with pytest.raises(SetupError, match='set model.') as error:
        check_class_counts(cfg)
    assert message in str(error.value)


def test_classes_in_a_wrapped_data_set():
    cfg = Config.fromfile(str(DYT_ADE_CFG))
    cfg.train_dataloader.dataset = dict(
        type='RepeatDataset', times=2, dataset=cfg.train_dataloader.dataset)
    cfg.model.decode_head.num_classes = 6
    with pytest.raises(SetupError, match='train_dataloader.dataset.dataset.metainfo.classes'):
        check_class_counts(cfg)


@pytest.fixture(scope='module')
def three_class_folders(data_workspace, tmp_path_factory):
    """``train/`` and ``val/``, each with the class folders zero, one, two."""
    root = tmp_path_factory.mktemp('my_set')
    write_classification_set(data_workspace / 'data/digits', root)
    return root


def refusal(tool: str, args: list, workspace, monkeypatch, capsys) -> str:
    """What ``tools/<tool>`` prints to stderr as it stops on ``args``."""
    monkeypatch.chdir(workspace)
    with pytest.raises(SystemExit) as stop:
        load_tool(tool).main([str(a) for a in args])
    assert stop.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    'loader, head', [('train_dataloader', 4), ('val_dataloader', 10)],
    ids=['train-4-class-head', 'val-of-the-10-digits'])
def test_class_folders_of_another_number_stop_training_before_its_first_step(
        loader, head, three_class_folders, data_workspace, tmp_path, monkeypatch, capsys):
    error = refusal('train.py', [
        VIT_DIGITS_CFG, '--work-dir', tmp_path, '--cfg-options', f'model.head.num_classes={head}',
        f'{loader}.dataset.data_root={three_class_folders}'
    ], data_workspace, monkeypatch, capsys)
    split = loader.split('_')[0]
    assert (f'model.head.num_classes={head} but the data set of {loader} (FileCheckedCustomDataset '
            f"under {three_class_folders / split}) has 3 classes: 'one', 'two', 'zero'; set "
            'model.head.num_classes=3') in error
    assert not list(tmp_path.rglob('*.pth')) and not list(tmp_path.rglob('scalars.json'))


def test_class_folders_of_another_number_stop_testing(dyt_digits_checkpoint, three_class_folders,
                                                      data_workspace, monkeypatch, capsys):
    error = refusal('test.py', [
        DYT_DIGITS_CFG, dyt_digits_checkpoint, '--cfg-options',
        f'test_dataloader.dataset.data_root={three_class_folders}', RANDOM_FROZEN
    ], data_workspace, monkeypatch, capsys)
    assert (
        'model.head.num_classes=10 but the data set of test_dataloader '
        f"(FileCheckedCustomDataset under {three_class_folders / 'val'}) has 3 classes") in error


def test_the_data_set_type_s_own_classes_are_counted(data_workspace, tmp_path, monkeypatch, capsys):
    """Without ``metainfo`` ADE20KDataset reads its files as ADE20K's 150
    classes: the demo's 5-class UperNet is refused, naming them."""
    error = refusal('train.py', [
        DYT_ADE_CFG, '--work-dir', tmp_path, '--cfg-options',
        'train_dataloader.dataset.metainfo=None', RANDOM_FROZEN
    ], data_workspace, monkeypatch, capsys)
    assert ('model.decode_head.num_classes=5 but the data set of train_dataloader '
            '(FileCheckedADE20KDataset under data/ade_shapes/images/training) has 150 classes: '
            "'wall', 'building', 'sky', 'floor', 'tree', 'ceiling', 'road', 'bed ', ... (142 more)"
            ) in error


def test_the_hook_in_custom_hooks_stops_a_stock_runner(three_class_folders, data_workspace,
                                                       tmp_path, monkeypatch):
    """docs/openmmlab_tools.md: ``dict(type='ClassCountCheckHook')`` in
    ``custom_hooks`` makes a stock train.py's runner (mmengine's
    ``Runner.from_cfg``, as mmpretrain's tools/train.py builds it) stop before
    the first step on 3 class folders under a 4-class head."""
    monkeypatch.chdir(data_workspace)
    cfg = Config.fromfile(str(VIT_DIGITS_CFG))
    cfg.work_dir = str(tmp_path)
    cfg.model.head.num_classes = 4
    cfg.train_dataloader.dataset.data_root = str(three_class_folders)
    cfg.custom_hooks = [*cfg.get('custom_hooks', []), dict(type='ClassCountCheckHook')]
    runner = Runner.from_cfg(cfg)
    with pytest.raises(
            SetupError, match='model.head.num_classes=4 but the data set of '
            'train_dataloader'):
        runner.train()
    assert not list(tmp_path.rglob('*.pth'))
