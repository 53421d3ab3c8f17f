"""A model head whose class count differs from the classes the data declare is
refused before training (mmdet trains an 80-class head on 3 classes without a
word; a classification head smaller than the labels fails in the loss
without naming anything)."""
import pytest
from mmengine.config import Config

from helpers.configs import DYT_ADE_CFG, DYT_COCO_CFG, DYT_CONFIG_DIR, DYT_DIGITS_CFG
from mmvitdyn.engine.runner_setup import SetupError, check_class_counts

DTD_CFG = DYT_CONFIG_DIR / 'vit-base-p16-dyt_d16_1xb64-100e_vtab1k-dtd-224px.py'


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
