"""The COCO shapes set: exact polygons, and mmdet's CocoDataset reads it."""
import json

import numpy as np
import pytest
import torch
from mmdet.registry import DATASETS, METRICS
from mmengine.registry import init_default_scope
from pycocotools import mask as mask_utils

from mmvitdyn.datasets.generators import (COCO_SHAPES_CLASSES, COCO_SHAPES_PALETTE,
                                          generate_coco_shapes)
from mmvitdyn.datasets.generators.coco_shapes import polygon_area, shape_polygon


@pytest.fixture(scope='module')
def coco_root(tmp_path_factory):
    """A small COCO shapes set, generated once for this module."""
    root = tmp_path_factory.mktemp('data') / 'coco_shapes'
    generate_coco_shapes(str(root), num_train=6, num_val=3)
    return root


@pytest.fixture(scope='module')
def val_json(coco_root):
    return json.loads((coco_root / 'annotations' / 'instances_val2017.json').read_text())


def test_polygons_are_inscribed_shapes():
    square = shape_polygon('square', np.array([10., 10.]), 2**0.5, 0.25 * np.pi)
    assert np.allclose(np.sort(square, axis=0), [[9, 9], [9, 9], [11, 11], [11, 11]])
    assert polygon_area(square) == pytest.approx(4, abs=0.02)
    circle = shape_polygon('circle', np.zeros(2), 10., 0.)
    assert polygon_area(circle) == pytest.approx(np.pi * 100, rel=0.01)


def test_annotations_agree_with_their_polygons(val_json):
    assert [c['name'] for c in val_json['categories']] == list(COCO_SHAPES_CLASSES)
    size = val_json['images'][0]['height']
    for ann in val_json['annotations']:
        polygon = np.array(ann['segmentation'][0]).reshape(-1, 2)
        x, y, w, h = ann['bbox']
        assert np.allclose([x, y, x + w, y + h], [*polygon.min(0), *polygon.max(0)], atol=0.011)
        assert ann['area'] == pytest.approx(polygon_area(polygon), abs=0.01)
        rle = mask_utils.frPyObjects(ann['segmentation'], size, size)
        pixels = mask_utils.area(mask_utils.merge(rle))
        assert pixels == pytest.approx(ann['area'], rel=0.15)


def test_shapes_of_an_image_do_not_overlap(val_json):
    size = val_json['images'][0]['height']
    for image in val_json['images']:
        anns = [a for a in val_json['annotations'] if a['image_id'] == image['id']]
        assert 1 <= len(anns) <= 4
        masks = [
            mask_utils.decode(
                mask_utils.merge(mask_utils.frPyObjects(a['segmentation'], size, size)))
            for a in anns
        ]
        assert np.sum(masks, axis=0).max() == 1


def test_coco_dataset_reads_the_set(coco_root, dataset_config):
    init_default_scope('mmdet')
    cfg = dataset_config('coco_shapes_instance', coco_root)
    assert cfg.train_dataloader.dataset.metainfo == dict(
        classes=COCO_SHAPES_CLASSES, palette=COCO_SHAPES_PALETTE)
    train = DATASETS.build(cfg.train_dataloader.dataset)
    val = DATASETS.build(cfg.val_dataloader.dataset)
    assert (len(train), len(val)) == (6, 3)
    assert train.metainfo['classes'] == COCO_SHAPES_CLASSES
    sample = train[0]
    inputs, instances = sample['inputs'], sample['data_samples'].gt_instances
    assert inputs.shape[0] == 3 and 102 <= max(inputs.shape[1:]) <= 160
    assert len(instances) == len(train.get_data_info(0)['instances']) >= 1
    assert instances.masks.to_ndarray().shape[1:] == tuple(inputs.shape[1:])


def test_ground_truth_scores_full_map(coco_root, dataset_config):
    """Predicting the ground truth gives bbox and segm mAP 1 with the
    config's CocoMetric: the json, the dataset and the masks agree."""
    init_default_scope('mmdet')
    cfg = dataset_config('coco_shapes_instance', coco_root)
    cfg.val_evaluator.ann_file = str(coco_root / 'annotations' / 'instances_val2017.json')
    val = DATASETS.build(cfg.val_dataloader.dataset)
    metric = METRICS.build(cfg.val_evaluator)
    metric.dataset_meta = val.metainfo
    for index in range(len(val)):
        info = val.get_data_info(index)
        height, width = info['height'], info['width']
        masks = [
            mask_utils.decode(
                mask_utils.merge(mask_utils.frPyObjects(inst['mask'], height, width)))
            for inst in info['instances']
        ]
        predictions = dict(
            bboxes=torch.tensor([inst['bbox'] for inst in info['instances']]),
            labels=torch.tensor([inst['bbox_label'] for inst in info['instances']]),
            scores=torch.ones(len(masks)),
            masks=torch.from_numpy(np.stack(masks)).bool())
        metric.process(
            {},
            [dict(img_id=info['img_id'], ori_shape=(height, width), pred_instances=predictions)])
    results = metric.evaluate(len(val))
    assert results['coco/bbox_mAP'] == pytest.approx(1.0)
    assert results['coco/segm_mAP'] == pytest.approx(1.0)
