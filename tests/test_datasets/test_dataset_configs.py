"""The dataset base configs parse, and their pipelines build."""
import pytest
from mmengine.config import Config
from mmengine.dataset import Compose
from mmengine.registry import init_default_scope

from mmvitdyn.datasets.data_roots import DATALOADERS

SCOPES = {
    'digits_bs32_32px': 'mmpretrain',
    'imagenet_bs64_224': 'mmpretrain',
    'cifar100_bs64_224': 'mmpretrain',
    'vtab1k_bs64_224': 'mmpretrain',
    'coco_shapes_instance': 'mmdet',
    'coco_instance_lsj_1024': 'mmdet',
    'ade_shapes': 'mmseg',
    'ade20k_512x512': 'mmseg',
}


@pytest.mark.parametrize('name', sorted(SCOPES))
def test_pipelines_build(dataset_config, name):
    cfg = dataset_config(name)
    init_default_scope(SCOPES[name])
    for loader in DATALOADERS:
        assert len(Compose(cfg[loader].dataset.pipeline).transforms) >= 2


def test_lsj_pipeline_is_the_vitdet_recipe(dataset_config):
    cfg = dataset_config('coco_instance_lsj_1024')
    train = cfg.train_dataloader.dataset.pipeline
    assert [t.type for t in train] == [
        'LoadImageFromFile', 'LoadAnnotations', 'RandomResize', 'RandomCrop', 'FilterAnnotations',
        'RandomFlip', 'Pad', 'PackDetInputs'
    ]
    assert train[2].ratio_range == (0.1, 2.0)
    assert train[3].crop_size == train[6].size == (1024, 1024)
    test = cfg.test_dataloader.dataset.pipeline
    assert [t.type for t in test[1:3]] == ['Resize', 'Pad']
    assert cfg.val_evaluator.metric == ['bbox', 'segm']


def test_vtab_task_config_is_the_documented_diff(tmp_path, dataset_config):
    """The task config sketched in vtab1k_bs64_224.py moves every split."""
    base = dataset_config('vtab1k_bs64_224').filename
    task = tmp_path / 'vtab1k_dtd.py'
    task.write_text(f'_base_ = [{base!r}]\n'
                    "vtab_task = 'dtd'\n"
                    "data_root = f'data/vtab-1k/{vtab_task}'\n"
                    'train_dataloader = dict(dataset=dict(data_root=data_root))\n'
                    'val_dataloader = dict(dataset=dict(data_root=data_root))\n'
                    'test_dataloader = val_dataloader\n')
    cfg = Config.fromfile(str(task))
    datasets = [cfg[loader].dataset for loader in DATALOADERS]
    assert [d.data_root for d in datasets] == ['data/vtab-1k/dtd'] * 3
    assert [d.ann_file for d in datasets] == ['train800val200.txt', 'test.txt', 'test.txt']
