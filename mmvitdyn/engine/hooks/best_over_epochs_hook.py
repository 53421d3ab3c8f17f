"""The best value of a validation metric over the epochs so far, logged next to it."""
from typing import Dict, Optional

from mmengine.hooks import Hook
from mmengine.registry import HOOKS

RULES = ('greater', 'less')


@HOOKS.register_module()
class BestOverEpochsHook(Hook):
    """Log ``<key><suffix>``, the best ``key`` over every validation epoch so far.

    E.g. ``accuracy/top1_best_epoch`` next to the epoch's ``accuracy/top1``, in the
    validation log, the visualiser backends and the dict the validation loop
    returns. The best value lives in the message hub's runtime information, which
    checkpoints keep, so a resumed run carries on from it (docs/recipes.md).

    Args:
        key (str): The metric, as the evaluator names it. Defaults to
            'accuracy/top1'.
        rule (str): 'greater' or 'less' (which value is better). Defaults to
            'greater'.
        suffix (str): Appended to ``key`` to name the best value. Defaults to
            '_best_epoch'.
    """
    priority = 'NORMAL'  # after RuntimeInfoHook, before LoggerHook prints the epoch

    def __init__(self,
                 key: str = 'accuracy/top1',
                 rule: str = 'greater',
                 suffix: str = '_best_epoch'):
        if rule not in RULES:
            raise ValueError(f'rule={rule!r} is not supported; allowed: {RULES}')
        if not suffix:
            raise ValueError("suffix='' would log the best value under the metric's own name; "
                             'give a non-empty suffix such as "_best_epoch"')
        self.key = key
        self.rule = rule
        self.best_key = key + suffix

    def after_val_epoch(self, runner, metrics: Optional[Dict[str, float]] = None) -> None:
        """Update the best value with ``metrics[key]`` and publish it (in place
        in ``metrics`` and as the scalar ``val/<key><suffix>``)."""
        if metrics is None or self.key not in metrics:
            raise KeyError(f'BestOverEpochsHook: key={self.key!r} is not among the validation '
                           f'metrics {sorted(metrics or {})}')
        value = float(metrics[self.key])
        best = runner.message_hub.get_info(self.best_key)
        if best is None or (value > best if self.rule == 'greater' else value < best):
            best = value
        runner.message_hub.update_info(self.best_key, best)
        runner.message_hub.update_scalar(f'val/{self.best_key}', best)
        metrics[self.best_key] = best
