"""mmdet's COCO metric, reporting zeros (and why) when nothing was detected."""
from typing import Dict

from mmdet.evaluation import CocoMetric
from mmengine.logging import MMLogger
from mmengine.registry import METRICS

# The figures mmdet's CocoMetric reports for each metric by default (a
# proposal's without the metric's name).
DEFAULT_ITEMS = {
    'bbox': ('mAP', 'mAP_50', 'mAP_75', 'mAP_s', 'mAP_m', 'mAP_l'),
    'segm': ('mAP', 'mAP_50', 'mAP_75', 'mAP_s', 'mAP_m', 'mAP_l'),
    'proposal': ('AR@100', 'AR@300', 'AR@1000', 'AR_s@1000', 'AR_m@1000', 'AR_l@1000'),
}

NOTHING_DETECTED = (
    'No image of the data set has a detection: every score stayed under the score threshold of '
    "the model's test_cfg (Mask R-CNN: model.test_cfg.rcnn.score_thr, 0.05 in mmdet's "
    'configs), as after a short run. The metrics are reported as 0 (COCO AP of no detections). '
    'Train longer, or look at the scores with --cfg-options model.test_cfg.rcnn.score_thr=0.001')


@METRICS.register_module()
class EmptyAwareCocoMetric(CocoMetric):
    """mmdet's :class:`~mmdet.evaluation.CocoMetric` that reports every metric as 0,
    and says why, when no image has a detection (mmdet returns no metric then);
    takes its arguments."""

    def compute_metrics(self, results: list) -> Dict[str, float]:
        detected = any(len(pred['bboxes']) for _, pred in results)
        if detected or self.format_only or not set(self.metrics) <= set(DEFAULT_ITEMS):
            return super().compute_metrics(results)
        MMLogger.get_current_instance().warning(NOTHING_DETECTED)
        return {
            item if metric == 'proposal' else f'{metric}_{item}': 0.0
            for metric in self.metrics
            for item in (self.metric_items or DEFAULT_ITEMS[metric])
        }
