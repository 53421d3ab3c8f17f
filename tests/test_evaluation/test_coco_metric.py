"""A detection run that detects nothing reports its COCO metrics as 0 and says
why (mmdet's CocoMetric logs "The testing results of the whole dataset is
empty." and returns no metric); with detections the figures are mmdet's."""
import json

import numpy as np
import pycocotools.mask as mask_utils
import pytest
import torch
from mmdet.evaluation import CocoMetric

from mmvitdyn.evaluation.coco_metric import EmptyAwareCocoMetric

CLASSES = ('circle', 'square', 'triangle')


@pytest.fixture
def val_file(data_workspace):
    return str(data_workspace / 'data/coco_shapes/annotations/instances_val2017.json')


def samples(val_file: str, detect: bool) -> list:
    """A data sample per validation image: no detection, or each object's box
    and mask as drawn (score 0.9)."""
    coco = json.loads(open(val_file).read())
    category = {c['id']: CLASSES.index(c['name']) for c in coco['categories']}
    found = []
    for image in coco['images']:
        h, w = image['height'], image['width']
        objects = [a for a in coco['annotations'] if a['image_id'] == image['id'] and detect]
        boxes = [[x, y, x + bw, y + bh] for x, y, bw, bh in (a['bbox'] for a in objects)]
        masks = [
            mask_utils.decode(mask_utils.frPyObjects(a['segmentation'], h, w)).max(-1)
            for a in objects
        ]
        found.append(
            dict(
                img_id=image['id'],
                ori_shape=(h, w),
                pred_instances=dict(
                    bboxes=torch.tensor(boxes, dtype=torch.float32).reshape(-1, 4),
                    scores=torch.full((len(objects), ), 0.9),
                    labels=torch.tensor([category[a['category_id']] for a in objects],
                                        dtype=torch.long),
                    masks=torch.from_numpy(np.array(masks, dtype=bool).reshape(-1, h, w)))))
    return found


def evaluate(metric_type, val_file: str, detect: bool) -> dict:
    metric = metric_type(ann_file=val_file, metric=['bbox', 'segm'])
    metric.dataset_meta = dict(classes=CLASSES)
    data = samples(val_file, detect)
    metric.process({}, data)
    return metric.evaluate(len(data))


def test_no_detection_reports_zeros_and_why(val_file, log):
    assert evaluate(CocoMetric, val_file, detect=False) == {}  # mmdet's: nothing to log
    figures = evaluate(EmptyAwareCocoMetric, val_file, detect=False)
    items = ('mAP', 'mAP_50', 'mAP_75', 'mAP_s', 'mAP_m', 'mAP_l')
    assert figures == {f'coco/{m}_{i}': 0.0 for m in ('bbox', 'segm') for i in items}
    warned = [r.getMessage() for r in log if r.levelname == 'WARNING']
    assert any('model.test_cfg.rcnn.score_thr' in m and 'reported as 0' in m for m in warned)


def test_detections_give_mmdet_s_figures(val_file):
    ours = evaluate(EmptyAwareCocoMetric, val_file, detect=True)
    assert ours == evaluate(CocoMetric, val_file, detect=True)
    assert ours['coco/bbox_mAP'] == 1.0  # every object found exactly
