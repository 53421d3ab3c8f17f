"""The ADE shapes set: ADE20K class values that mmseg's ADE20KDataset maps
onto the reduced class tuple."""
import numpy as np
import pytest
from mmengine.registry import init_default_scope
from mmseg.datasets import ADE20KDataset
from mmseg.registry import DATASETS, TRANSFORMS
from PIL import Image

from mmvitdyn.datasets.generators import (ADE_SHAPES_ADE20K_INDICES, ADE_SHAPES_CLASSES,
                                          ADE_SHAPES_PALETTE, generate_ade_shapes)


@pytest.fixture(scope='module')
def ade_root(tmp_path_factory):
    """A small ADE shapes set, generated once for this module."""
    root = tmp_path_factory.mktemp('data') / 'ade_shapes'
    generate_ade_shapes(str(root), num_train=4, num_val=2)
    return root


def test_classes_and_palette_are_ade20k_entries():
    classes = ADE20KDataset.METAINFO['classes']
    palette = ADE20KDataset.METAINFO['palette']
    assert tuple(classes[i] for i in ADE_SHAPES_ADE20K_INDICES) == (ADE_SHAPES_CLASSES)
    assert [palette[i] for i in ADE_SHAPES_ADE20K_INDICES] == (ADE_SHAPES_PALETTE)


def test_label_maps_hold_ade20k_values_and_borders(ade_root):
    allowed = {0} | {index + 1 for index in ADE_SHAPES_ADE20K_INDICES}
    seen = set()
    for split in ('training', 'validation'):
        images = sorted((ade_root / 'images' / split).glob('*.jpg'))
        labels = sorted((ade_root / 'annotations' / split).glob('*.png'))
        assert [p.stem for p in images] == [p.stem for p in labels]
        for image_path, label_path in zip(images, labels):
            label = np.asarray(Image.open(label_path))
            assert label.shape == (128, 128) and label.dtype == np.uint8
            assert 0 in label and set(np.unique(label)) <= allowed
            seen |= set(np.unique(label))
            assert np.asarray(Image.open(image_path)).shape == (128, 128, 3)
    assert seen == allowed


def test_dataset_maps_labels_to_the_reduced_classes(ade_root, dataset_config):
    init_default_scope('mmseg')
    cfg = dataset_config('ade_shapes', ade_root)
    assert cfg.train_dataloader.dataset.metainfo == dict(
        classes=ADE_SHAPES_CLASSES, palette=ADE_SHAPES_PALETTE)
    train = DATASETS.build(cfg.train_dataloader.dataset)
    val = DATASETS.build(cfg.val_dataloader.dataset)
    assert (len(train), len(val)) == (4, 2)
    assert train.metainfo['classes'] == ADE_SHAPES_CLASSES
    assert train.metainfo['palette'] == ADE_SHAPES_PALETTE
    load = TRANSFORMS.build(dict(type='LoadAnnotations'))
    for index in range(len(val)):
        info = val.get_data_info(index)
        seg = load(info)['gt_seg_map']
        raw = np.asarray(Image.open(info['seg_map_path']))
        assert ((seg == 255) == (raw == 0)).all()
        for reduced, ade_index in enumerate(ADE_SHAPES_ADE20K_INDICES):
            assert ((seg == reduced) == (raw == ade_index + 1)).all()
        assert set(np.unique(seg)) <= set(range(5)) | {255}


def test_train_pipeline_runs(ade_root, dataset_config):
    init_default_scope('mmseg')
    cfg = dataset_config('ade_shapes', ade_root)
    sample = DATASETS.build(cfg.train_dataloader.dataset)[0]
    inputs, seg = sample['inputs'], sample['data_samples'].gt_sem_seg.data
    assert inputs.shape[0] == 3 and max(inputs.shape[1:]) <= 128
    assert tuple(seg.shape) == (1, *inputs.shape[1:])
    assert set(seg.unique().tolist()) <= set(range(5)) | {255}
